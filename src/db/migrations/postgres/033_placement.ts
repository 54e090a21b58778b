import type { Migration } from '../../migrate.ts';

/** SQLite's migration 033 on PostgreSQL: each project's placement (primary, epoch) and the nodes holding its copies. */
export const postgresPlacementMigration: Migration = {
  version: 33,
  name: 'placement',
  sql: `
CREATE TABLE project_placement (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  epoch BIGINT NOT NULL,
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
