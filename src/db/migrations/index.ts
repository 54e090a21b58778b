import type { Migration } from '../migrate.ts';
import { accountsMigration } from './001_accounts.ts';
import { contentMigration } from './002_content.ts';
import { syncMigration } from './006_sync.ts';
import { pendingPushesMigration } from './007_pending_pushes.ts';
import { nodeUploadsMigration } from './008_node_uploads.ts';
import { toolsMigration } from './010_tools.ts';
import { mcpProxyMigration } from './011_mcp_proxy.ts';
import { agentsMigration } from './012_agents.ts';
import { agentWorkspacesMigration } from './013_agent_workspaces.ts';
import { agentToolBindingsMigration } from './014_agent_tool_bindings.ts';
import { ingestMigration } from './015_ingest.ts';
import { tablesMigration } from './016_tables.ts';
import { dbConnectionsMigration } from './017_db_connections.ts';
import { publishingMigration } from './018_publishing.ts';
import { syncRuntimeMigration } from './019_sync_runtime.ts';
import { oauthMigration } from './020_oauth.ts';
import { webhookDeliveriesMigration } from './021_webhook_deliveries.ts';
import { folderSyncNamesMigration } from './022_folder_sync_names.ts';
import { commitAuthorsMigration } from './023_commit_authors.ts';
import { webhooksMigration } from './024_webhooks.ts';
import { blameCheckpointsMigration } from './025_blame_checkpoints.ts';
import { projectLeasesMigration } from './026_project_leases.ts';
import { agentSeqMigration } from './027_agent_seq.ts';
import { syncSeqMigration } from './028_sync_seq.ts';
import { ingestOrderMigration } from './029_ingest_order.ts';

/** Every schema migration, in order. Each area of the service adds its own file here. */
export const migrations: Migration[] = [accountsMigration, contentMigration, syncMigration, pendingPushesMigration, nodeUploadsMigration, toolsMigration, mcpProxyMigration, agentsMigration, agentWorkspacesMigration, agentToolBindingsMigration, ingestMigration, tablesMigration, dbConnectionsMigration, publishingMigration, syncRuntimeMigration, oauthMigration, webhookDeliveriesMigration, folderSyncNamesMigration, commitAuthorsMigration, webhooksMigration, blameCheckpointsMigration, projectLeasesMigration, agentSeqMigration, syncSeqMigration, ingestOrderMigration];
