import type { Actor } from '../content/contentStore.ts';
import type { Db } from '../db/database.ts';

export interface PushRecord {
  projectId: string;
  actor: Actor;
  before: string | null;
  after: string | null;
  /** Commits the push brought. */
  commits: number;
  receivedAt: string;
}

/**
 * One audit entry per accepted push, next to the per-node entries the indexing writes. A push
 * concerns the whole project, so it is recorded at the root (path '', no node).
 */
export function recordPush(db: Db, r: PushRecord): void {
  db.prepare(
    `INSERT INTO content_audit_log (project_id, node_id, path, action, actor_type, actor_id, author, details, created_at)
     VALUES (?, '', '', 'push', ?, ?, ?, ?, ?)`,
  ).run(
    r.projectId,
    r.actor.type,
    r.actor.id,
    r.actor.author,
    JSON.stringify({ ref: 'refs/heads/main', before: r.before, after: r.after, commits: r.commits }),
    r.receivedAt,
  );
}
