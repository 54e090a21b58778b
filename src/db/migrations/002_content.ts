import type { Migration } from '../migrate.ts';

/**
 * The content index (src/content). Everything here can be rebuilt from the git repositories
 * (`cns reindex`): commit trailers carry node ids, types and operations. No foreign keys to
 * projects: a repository may exist before its project row (tests, imports) and rebuilding must
 * not depend on the order tables are filled.
 */
export const contentMigration: Migration = {
  version: 2,
  name: 'content',
  sql: `
CREATE TABLE nodes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  path TEXT NOT NULL,
  parent_id TEXT,
  type TEXT NOT NULL CHECK (type IN ('folder','json','markdown','file')),
  name TEXT NOT NULL,
  content_hash TEXT,
  size INTEGER NOT NULL DEFAULT 0,
  mime_type TEXT,
  state TEXT NOT NULL CHECK (state IN ('active','trashed')),
  version INTEGER NOT NULL,
  original_path TEXT,
  deleted_at TEXT,
  deleted_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX nodes_project_path ON nodes(project_id, path);
CREATE INDEX nodes_project_parent ON nodes(project_id, parent_id, state);

CREATE TABLE node_versions (
  node_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  project_id TEXT NOT NULL,
  project_version INTEGER NOT NULL,
  commit_id TEXT NOT NULL,
  blob_id TEXT,
  type TEXT NOT NULL,
  path TEXT NOT NULL,
  parent_id TEXT,
  operation TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  author TEXT NOT NULL,
  message TEXT,
  size INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (node_id, version)
) WITHOUT ROWID;
CREATE INDEX node_versions_project ON node_versions(project_id, project_version);

CREATE TABLE project_commits (
  project_id TEXT NOT NULL,
  project_version INTEGER NOT NULL,
  commit_id TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  author TEXT NOT NULL,
  message TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, project_version)
) WITHOUT ROWID;
CREATE INDEX project_commits_commit ON project_commits(project_id, commit_id);

CREATE TABLE content_audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  path TEXT NOT NULL,
  action TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  author TEXT NOT NULL,
  details TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX content_audit_log_node ON content_audit_log(node_id, id);
CREATE INDEX content_audit_log_path ON content_audit_log(project_id, path, id);

CREATE TABLE content_index_state (
  project_id TEXT PRIMARY KEY,
  head_commit TEXT,
  project_version INTEGER NOT NULL DEFAULT 0,
  commits_since_repack INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);
`,
};
