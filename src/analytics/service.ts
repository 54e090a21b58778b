import type { ContentStore } from '../content/contentStore.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { AccessCounter } from './accessCounter.ts';
import { AnalyticsStore } from './analyticsStore.ts';
import { UsageReports, type ReportDeps } from './usageReports.ts';
import { VisitorHasher } from './visitorHash.ts';

/** Usage analytics (spec 4.10): the counter every request feeds and the reports read from its aggregates. */
export interface AnalyticsService {
  counter: AccessCounter;
  reports: UsageReports;
  /** Writes what is pending and stops counting (shutdown, before the metadata store closes). */
  close(): Promise<void>;
}

export interface AnalyticsDeps {
  metadata: MetadataStore;
  logger: Logger;
  enabled: boolean;
  flushMs: number;
  content: ContentStore;
  access: ContentAccess;
  authorizer: Authorizer;
  connections: AccessConnectionStore;
  publishes: ReportDeps['publishes'];
}

export function createAnalytics(d: AnalyticsDeps): AnalyticsService {
  const store = new AnalyticsStore(d.metadata);
  const counter = new AccessCounter({ store, hasher: new VisitorHasher(d.metadata), nodes: d.content, logger: d.logger, enabled: d.enabled, flushMs: d.flushMs });
  const reports = new UsageReports({ store, access: d.access, authorizer: d.authorizer, nodes: d.content, publishes: d.publishes, connections: d.connections });
  return { counter, reports, close: () => counter.close() };
}
