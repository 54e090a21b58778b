import type { AgentsTables } from './tables/agents.ts';
import type { AuthTables } from './tables/auth.ts';
import type { AnalyticsTables } from './tables/analytics.ts';
import type { ClusterTables } from './tables/cluster.ts';
import type { DbConnectionsTables } from './tables/dbConnections.ts';
import type { IngestTables } from './tables/ingest.ts';
import type { McpProxyTables } from './tables/mcpProxy.ts';
import type { OAuthTables } from './tables/oauth.ts';
import type { ProjectsTables } from './tables/projects.ts';
import type { PublishingTables } from './tables/publishing.ts';
import type { SyncsTables } from './tables/syncs.ts';
import type { ToolsTables } from './tables/tools.ts';
import type { WebhooksTables } from './tables/webhooks.ts';

/**
 * The metadata tables as the data-access layer sees them (docs/design/postgres.md), for Kysely's
 * typed queries: one file per domain in tables/, each table an interface named as in SQL. A
 * domain adds its file here when its store moves to the metadata store; the migrations
 * (src/db/migrations/) stay the truth of the schema.
 */
export interface MetadataSchema extends ProjectsTables, AnalyticsTables, McpProxyTables, WebhooksTables, PublishingTables, OAuthTables, DbConnectionsTables, ToolsTables, AgentsTables, SyncsTables, IngestTables, AuthTables, ClusterTables {}
