import type { Migration } from '../migrate.ts';

/**
 * Pushes the git remote accepted whose commits are not indexed yet (issue 5). A row is written
 * when the pre-receive check accepts a push (before main can move) and deleted in the SQLite
 * transaction that indexes the push's commits and writes its `push` audit row, or when the push
 * ended without moving main. Rows survive a crash, so the start-up reconciler still attributes
 * the pushed commits to the credential that pushed them, at the time the push arrived.
 */
export const pendingPushesMigration: Migration = {
  version: 7,
  name: 'pending_pushes',
  sql: `
CREATE TABLE content_pending_pushes (
  project_id TEXT NOT NULL,
  after_commit TEXT NOT NULL,
  before_commit TEXT,
  commits INTEGER NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  actor_author TEXT NOT NULL,
  received_at TEXT NOT NULL,
  keep_commit_author INTEGER NOT NULL,
  registered_at TEXT NOT NULL,
  PRIMARY KEY (project_id, after_commit)
);
`,
};
