import type { Principal } from '../auth/principal.ts';
import type { NodeInfo } from '../content/types.ts';
import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import type { AnalyticsStore, CountFilter } from './analyticsStore.ts';

export type Interval = 'minute' | 'hour' | 'day';

/** Minutes per bucket of each interval (buckets are aligned to UTC minutes, hours and days). */
export const intervalMinutes: Record<Interval, number> = { minute: 1, hour: 60, day: 1440 };

/** The most points one time series answers (a day by minute, two months by hour, five years by day). */
export const MAX_POINTS = 2000;

export interface TimeseriesQuery {
  projectId: string;
  from: number;
  to: number;
  interval: Interval;
  publishId?: string;
  connectionId?: string;
  nodeId?: string;
}

export interface Point {
  t: string;
  views: number;
  api_calls: number;
  unique_visitors: number;
}

export interface SummaryQuery {
  projectId: string;
  from: number;
  to: number;
  limit: number;
}

/** What the reports read of a publish. */
type PublishedNode = { id: string; project_id: string; node_id: string; slug: string | null };

export interface ReportDeps {
  store: AnalyticsStore;
  access: ContentAccess;
  authorizer: Pick<Authorizer, 'requireProject'>;
  nodes: { findById(id: string): NodeInfo | null };
  publishes: {
    find(id: string): Promise<PublishedNode | null>;
    findMany(ids: readonly string[]): Promise<PublishedNode[]>;
  };
  connections: { find(id: string): Promise<ConnectionRecord | undefined> };
}

/** What the caller may see of the project's nodes: its content grant (null: none, e.g. an agent's bare key). */
interface Viewer {
  grant: ContentGrant | null;
  /** Whether the caller may see the project's connections (their names): keys:manage. */
  seesConnections: boolean;
}

const minuteFloor = (ms: number) => Math.floor(ms / 60_000);
const minuteCeil = (ms: number) => Math.ceil(ms / 60_000);

/**
 * The usage reports (spec 4.10): a time series and a summary of a project's counts. The caller
 * holds project:read (checked by the route); what it sees, figures and nodes alike, follows the
 * content-access policy (a scoped key counts the accesses of the nodes of its scope only), and
 * connection names need keys:manage, as listing connections does.
 */
export class UsageReports {
  constructor(private readonly d: ReportDeps) {}

  async timeseries(principal: Principal, q: TimeseriesQuery): Promise<{ interval: Interval; from: string; to: string; points: Point[] }> {
    const size = intervalMinutes[q.interval];
    const { first, end } = this.buckets(q.from, q.to, size);
    const viewer = await this.viewer(principal, q.projectId);
    if (q.nodeId !== undefined) this.requireNodeFilter(viewer, q.projectId, q.nodeId);
    if (q.publishId !== undefined) await this.requirePublishFilter(viewer, q.projectId, q.publishId);
    const filter = await this.scoped(viewer, { projectId: q.projectId, fromMinute: first, toMinute: end, publishId: q.publishId, connectionId: q.connectionId, nodeId: q.nodeId });
    const found = new Map((await this.d.store.buckets(filter, size)).map((b) => [b.bucket, b]));
    const points: Point[] = [];
    for (let b = first; b < end; b += size) {
      const c = found.get(b);
      points.push({ t: new Date(b * 60_000).toISOString(), views: c?.views ?? 0, api_calls: c?.apiCalls ?? 0, unique_visitors: c?.visitors ?? 0 });
    }
    return { interval: q.interval, from: new Date(first * 60_000).toISOString(), to: new Date(end * 60_000).toISOString(), points };
  }

  async summary(principal: Principal, q: SummaryQuery) {
    const { first, end } = this.buckets(q.from, q.to, 1, false);
    const viewer = await this.viewer(principal, q.projectId);
    const f = await this.scoped(viewer, { projectId: q.projectId, fromMinute: first, toMinute: end });
    // Ranked wider than the limit, so that what a scoped caller may not see leaves room for what it may.
    const wide = Math.max(q.limit * 5, 100);
    const totals = await this.d.store.totals(f);
    const topNodes = (await this.d.store.top(f, 'node_id', wide))
      .flatMap((r) => {
        const node = this.d.nodes.findById(r.id);
        const n = node && node.projectId === q.projectId ? node : null;
        if (!this.sees(viewer, n)) return [];
        return [{ node_id: r.id, path: n ? pathOf(n) : null, type: n?.type ?? null, views: r.views, api_calls: r.apiCalls, unique_visitors: r.visitors }];
      })
      .slice(0, q.limit);
    const rankedPublishes = await this.d.store.top(f, 'publish_id', wide);
    const publishes = new Map((await this.d.publishes.findMany(rankedPublishes.map((r) => r.id))).map((p) => [p.id, p]));
    const topPublishes = rankedPublishes
      .flatMap((r) => {
        const p = publishes.get(r.id);
        const node = p ? this.d.nodes.findById(p.node_id) : null;
        const n = node && node.projectId === q.projectId ? node : null;
        if (!this.sees(viewer, n)) return [];
        return [{ publish_id: r.id, node_id: p?.node_id ?? null, path: n ? pathOf(n) : null, slug: p?.slug ?? null, views: r.views, unique_visitors: r.visitors }];
      })
      .slice(0, q.limit);
    const topConnections = await Promise.all((await this.d.store.top(f, 'connection_id', q.limit)).map(async (r) => {
      const c = await this.d.connections.find(r.id);
      const known = c && c.project_id === q.projectId ? c : null;
      return { connection_id: r.id, kind: known?.kind ?? null, name: known && viewer.seesConnections ? known.name : null, api_calls: r.apiCalls };
    }));
    return {
      from: new Date(first * 60_000).toISOString(),
      to: new Date(end * 60_000).toISOString(),
      totals: { views: totals.views, api_calls: totals.apiCalls, unique_visitors: totals.visitors },
      top_publishes: topPublishes,
      top_nodes: topNodes,
      top_connections: topConnections,
    };
  }

  /** The whole buckets covering [from, to): their first minute and the minute after the last; 422 past MAX_POINTS (a series). */
  private buckets(from: number, to: number, size: number, capped = true): { first: number; end: number } {
    if (!(to > from)) throw invalidField('to', 'to must be later than from');
    const first = Math.floor(minuteFloor(from) / size) * size;
    const end = Math.ceil(minuteCeil(to) / size) * size;
    const points = (end - first) / size;
    if (capped && points > MAX_POINTS) {
      throw invalidField('interval', `the range holds ${points} points at this interval; at most ${MAX_POINTS}: choose a larger interval or a shorter range`);
    }
    return { first, end };
  }

  private async viewer(principal: Principal, projectId: string): Promise<Viewer> {
    let grant: ContentGrant | null = null;
    try {
      grant = await this.d.access.grant(principal, projectId, 'content:read');
    } catch {
      grant = null; // project:read without content (an agent's bare key): counts, but no nodes
    }
    let seesConnections = true;
    try {
      await this.d.authorizer.requireProject(principal, projectId, 'keys:manage');
    } catch {
      seesConnections = false;
    }
    return { grant, seesConnections };
  }

  /**
   * The filter narrowed to what the caller may read: a caller who reads the whole project sees
   * every count; any other (a key limited to a folder, a key that reads no content) only the
   * accesses of nodes the content-access policy lets it see, so totals, series and rankings
   * say nothing of the rest of the project.
   */
  private async scoped(v: Viewer, f: CountFilter): Promise<CountFilter> {
    if (v.grant?.scope === '') return f;
    const nodeIds = (await this.d.store.nodes(f)).filter((id) => {
      const node = this.d.nodes.findById(id);
      return node !== null && node.projectId === f.projectId && this.sees(v, node);
    });
    return { ...f, nodeIds };
  }

  /** A node the caller may see; a node that is gone (or never was in the project) only by a caller who sees the whole project. */
  private sees(v: Viewer, node: NodeInfo | null): boolean {
    if (!v.grant) return false;
    return node ? this.d.access.mayNode(v.grant, node) : v.grant.scope === '';
  }

  private requireNodeFilter(v: Viewer, projectId: string, nodeId: string): void {
    const node = this.d.nodes.findById(nodeId);
    const n = node && node.projectId === projectId ? node : null;
    if (this.sees(v, n)) return;
    if (n && v.grant) this.d.access.requireNode(v.grant, n); // outside the scope: the policy's 403
    throw new DomainError('NOT_FOUND', 'Node not found.');
  }

  private async requirePublishFilter(v: Viewer, projectId: string, publishId: string): Promise<void> {
    const p = await this.d.publishes.find(publishId);
    if (!p || p.project_id !== projectId) {
      if (v.grant?.scope === '') return; // a deleted publish's past counts
      throw new DomainError('NOT_FOUND', 'Publish not found.');
    }
    const node = this.d.nodes.findById(p.node_id);
    if (!this.sees(v, node && node.projectId === projectId ? node : null)) throw new DomainError('NOT_FOUND', 'Publish not found.');
  }
}

const pathOf = (n: NodeInfo) => (n.state === 'active' ? n.path : (n.originalPath ?? n.path));
