import type { Migration } from '../migrate.ts';

/**
 * Where each project of a cluster lives (issue 31, docs/design/cluster.md §3): its placement (the
 * primary node and the epoch it writes under) and the nodes holding a copy. Used on PostgreSQL
 * only; SQLite carries the same tables so both engines keep one schema version.
 */
export const placementMigration: Migration = {
  version: 33,
  name: 'placement',
  sql: `
CREATE TABLE project_placement (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  epoch INTEGER NOT NULL,
  primary_node TEXT,
  state TEXT NOT NULL CHECK (state IN ('ok','electing'))
);
CREATE INDEX project_placement_primary ON project_placement(primary_node);

CREATE TABLE project_copies (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  PRIMARY KEY (project_id, node_id)
);
CREATE INDEX project_copies_node ON project_copies(node_id);
`,
};
