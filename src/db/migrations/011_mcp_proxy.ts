import type { Migration } from '../migrate.ts';

/**
 * MCP proxy servers (issue 13, spec 4.9): external MCP servers registered on a project and
 * reached through /mcp/proxy/{id}/mcp. Header values (API keys) are stored only sealed with
 * the service's secret (src/auth/secretBox.ts, the row id as AAD): a JSON object of name → value.
 */
export const mcpProxyMigration: Migration = {
  version: 11,
  name: 'mcp_proxy',
  sql: `
CREATE TABLE mcp_proxy_servers (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  headers_encrypted TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX mcp_proxy_servers_name ON mcp_proxy_servers(project_id, name);
`,
};
