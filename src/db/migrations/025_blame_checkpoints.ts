import type { Migration } from '../migrate.ts';

/**
 * Blame checkpoints (issue 34): which commit last changed each line of every hundredth version
 * of a text node, so that blaming any version walks at most the versions since the last
 * checkpoint, after a restart too. Derived from git like the rest of the index: a reindex or a
 * purge drops them, and they are made again.
 */
export const blameCheckpointsMigration: Migration = {
  version: 25,
  name: 'blame_checkpoints',
  sql: `
CREATE TABLE blame_checkpoints (
  node_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  project_id TEXT NOT NULL,
  commit_id TEXT NOT NULL,
  path TEXT NOT NULL,
  origins TEXT NOT NULL,
  PRIMARY KEY (node_id, version)
) WITHOUT ROWID;
CREATE INDEX blame_checkpoints_project ON blame_checkpoints(project_id);
`,
};
