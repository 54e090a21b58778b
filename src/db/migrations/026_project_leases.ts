import type { Migration } from '../migrate.ts';

/**
 * Several workers per box (issue 29): which worker process holds each project's lease, and the
 * lease's epoch. The holder is one incarnation of a worker (a restarted worker is a new holder);
 * a lease passes to another holder only when its holder is no longer alive, and the epoch then
 * grows, so a write transaction that checks (holder, epoch) fences any stale owner.
 */
export const projectLeasesMigration: Migration = {
  version: 26,
  name: 'project_leases',
  sql: `
CREATE TABLE project_leases (
  project_id TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  taken_at TEXT NOT NULL
) WITHOUT ROWID;
`,
};
