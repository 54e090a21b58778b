import type { Db } from '../db/database.ts';
import type { Actor } from './types.ts';

/** A push the git remote accepted whose commits may not be indexed yet. */
export interface ExpectedPush {
  /** Tip of main before the push (null: the branch did not exist). */
  before: string | null;
  /** Tip the push moves main to. */
  after: string;
  /** How many new commits it brings (recorded in the push's audit entry). */
  commits: number;
  /** The credential that pushed: actor of the versions the push makes. */
  actor: Actor;
  /** When the push arrived (ISO 8601): created_at of those versions. */
  receivedAt: string;
  /** Keep the commit's author beside the actor (`Actor.commitAuthor`) when it differs. */
  keepCommitAuthor: boolean;
}

/** A registered push that never landed is dropped at start-up once older than this. */
export const STALE_PUSH_MS = 60 * 60 * 1000;

interface Row {
  project_id: string;
  after_commit: string;
  before_commit: string | null;
  commits: number;
  actor_type: Actor['type'];
  actor_id: string;
  actor_author: string;
  received_at: string;
  keep_commit_author: number;
  registered_at: string;
}

/**
 * Pushes registered when their pre-receive check accepted them, per project, until whichever
 * path indexes their commits first (the post-push sync, an API write catching up on the moved
 * ref, the start-up reconciler) consumes them. Kept in SQLite (`content_pending_pushes`, the
 * source of truth) so that they survive a crash between the ref update and the indexing: a row
 * is written before main can move and deleted in the transaction that indexes the push.
 */
export class PushExpectations {
  private readonly s;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      put: p(`INSERT OR REPLACE INTO content_pending_pushes
        (project_id, after_commit, before_commit, commits, actor_type, actor_id, actor_author, received_at, keep_commit_author, registered_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      byProject: p(`SELECT * FROM content_pending_pushes WHERE project_id = ? ORDER BY registered_at, rowid`),
      all: p(`SELECT * FROM content_pending_pushes ORDER BY project_id, registered_at, rowid`),
      forget: p(`DELETE FROM content_pending_pushes WHERE project_id = ? AND after_commit = ?`),
      forgetProject: p(`DELETE FROM content_pending_pushes WHERE project_id = ?`),
    };
  }

  /** Records the push (committed to the database when this returns, i.e. before main may move). */
  expect(projectId: string, push: ExpectedPush): void {
    this.s.put.run(
      projectId,
      push.after,
      push.before,
      push.commits,
      push.actor.type,
      push.actor.id,
      push.actor.author,
      push.receivedAt,
      push.keepCommitAuthor ? 1 : 0,
      new Date().toISOString(),
    );
  }

  pending(projectId: string): ExpectedPush[] {
    return (this.s.byProject.all(projectId) as Row[]).map(toPush);
  }

  /** Every registered push with the project it belongs to and when it was registered. */
  all(): (ExpectedPush & { projectId: string; registeredAt: string })[] {
    return (this.s.all.all() as Row[]).map((r) => ({ ...toPush(r), projectId: r.project_id, registeredAt: r.registered_at }));
  }

  /**
   * Forgets a push (indexed, or ended without moving main). Called inside the transaction that
   * indexes the push, it is consumed atomically with the versions and the audit row.
   */
  forget(projectId: string, after: string): void {
    this.s.forget.run(projectId, after);
  }

  forgetProject(projectId: string): void {
    this.s.forgetProject.run(projectId);
  }
}

function toPush(r: Row): ExpectedPush {
  return {
    before: r.before_commit,
    after: r.after_commit,
    commits: r.commits,
    actor: { type: r.actor_type, id: r.actor_id, author: r.actor_author },
    receivedAt: r.received_at,
    keepCommitAuthor: r.keep_commit_author === 1,
  };
}
