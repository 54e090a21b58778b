import type { Migration } from '../migrate.ts';

/**
 * Tools (issue 11, spec 4.9): named operations bound to a node of a project (or to the whole
 * project when node_id is NULL). The search indexes themselves live in their own files under
 * the data folder (derived from content, rebuildable); only the tool records are here.
 */
export const toolsMigration: Migration = {
  version: 10,
  name: 'tools',
  sql: `
CREATE TABLE tools (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX tools_project ON tools(project_id, created_at);
CREATE INDEX tools_node ON tools(node_id);
`,
};
