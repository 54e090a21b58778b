import type { Migration } from '../migrate.ts';

/**
 * Agent workspaces (issue 14, spec 4.10): an agent's draft, kept as an overlay of changed paths
 * over the live content (the live content itself is never copied). One workspace per agent; its
 * rows go with the agent's connection (ON DELETE CASCADE).
 *
 * agent_workspace_files, one row per drafted path:
 * - action `written` (content for files, NULL for a folder the draft made) or `deleted` (hides the
 *   path and everything beneath it);
 * - base_version: the live node's version when the path was FIRST drafted (NULL: nothing was
 *   there), base_node_id: that node (a node deleted and made again at the path restarts its
 *   versions, so the version alone cannot say it is the same node), base_project_version: the
 *   project version it was drafted at (what a folder's deletion is checked against: a folder's
 *   own version does not change when its content does). Completing merges against these.
 */
export const agentWorkspacesMigration: Migration = {
  version: 13,
  name: 'agent_workspaces',
  sql: `
CREATE TABLE agent_workspaces (
  agent_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  base_version INTEGER NOT NULL,
  roots TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE agent_workspace_files (
  agent_id TEXT NOT NULL REFERENCES agent_workspaces(agent_id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('written','deleted')),
  type TEXT NOT NULL CHECK (type IN ('markdown','json','file','folder')),
  content BLOB,
  base_version INTEGER,
  base_node_id TEXT,
  base_project_version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, path)
);
`,
};
