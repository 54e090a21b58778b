import type { ServerResponse } from 'node:http';
import { presentActor, type CommitChanges } from './changelog.ts';
import { scopedCommit } from './scopedChanges.ts';

/** How often a fan-out re-checks a subscriber's access at most (forced checks ignore it). */
const RECHECK_INTERVAL_MS = 1_000;

/** Changes listed per event; a larger commit says `truncated` and the changelog has the rest. */
const MAX_EVENT_CHANGES = 1000;

/** The JSON of one `change` event (spec 6 style: snake_case fields). */
export function presentCommitEvent(projectId: string, c: CommitChanges) {
  const truncated = c.changes.length > MAX_EVENT_CHANGES;
  return {
    type: 'change',
    project_id: projectId,
    project_version: c.projectVersion,
    commit_id: c.commitId,
    actor: presentActor(c.actor),
    message: c.message,
    created_at: c.createdAt,
    changes: c.changes.slice(0, MAX_EVENT_CHANGES).map((e) => ({
      node_id: e.nodeId,
      path: e.path,
      old_path: e.oldPath,
      operation: e.action,
      node_type: e.nodeType,
      version: e.version,
    })),
    ...(truncated ? { truncated: true, changes_total: c.changes.length } : {}),
  };
}

/**
 * Re-checks the subscriber's access: its scope as it stands now, or null when the credential
 * was revoked or deleted, the member removed, the project deleted. It may answer with a promise
 * (the memberships and keys are read from the async metadata store).
 */
export type AccessCheck = () => string | null | Promise<string | null>;

/**
 * One subscriber of the live feed: an open Server-Sent Events response. Writes never wait for
 * the consumer; what the socket has not taken yet stays in Node's buffer, and once that passes
 * `maxBufferBytes` the consumer is told to resync from the changelog and is closed, so a slow
 * reader costs bounded memory and never holds back writers or other readers.
 */
export class FeedClient {
  /** Commit number of the last commit this client has been given (or skipped as out of scope). */
  sentUpTo: number;
  private closed = false;
  private scope: string;
  private checkedAt = 0;
  /** A check answering with a promise, while it runs: nothing more is sent before it answers. */
  private checking: Promise<boolean> | null = null;
  /** A forced check asked while one was running (access changed meanwhile): check again after it. */
  private again = false;

  constructor(
    private readonly res: ServerResponse,
    readonly projectId: string,
    scope: string,
    start: number,
    private readonly maxBufferBytes: number,
    private readonly onClose: (c: FeedClient) => void,
    /** Who holds the stream (`key:<id>`, `user:<id>`), for the per-credential cap. */
    readonly holder: string = '',
    private readonly check: AccessCheck = () => scope,
  ) {
    this.scope = scope;
    this.sentUpTo = start;
    res.on('close', () => this.end());
  }

  /**
   * Re-checks access before anything more is sent: a stream whose access ended is told so and
   * closed (the scope is refreshed too, should it have narrowed). Returns whether it is still open,
   * or a promise of it when the check answers with one (or one is running): the caller must wait
   * for it before sending.
   */
  revalidate(force = true): boolean | Promise<boolean> {
    if (this.closed) return false;
    if (this.checking) {
      if (force) this.again = true;
      return this.checking;
    }
    // Fan-outs re-check at most once per interval (a busy project commits many times a second);
    // changes of keys and memberships force a check at once (feedAccessWatch), as heartbeats do.
    const now = Date.now();
    if (!force && now - this.checkedAt < RECHECK_INTERVAL_MS) return true;
    this.checkedAt = now;
    const answer = this.ask();
    if (!(answer instanceof Promise)) return this.settle(answer);
    const checking = this.settleLater(answer);
    this.checking = checking;
    return checking;
  }

  /** The check's answer; one that throws at once counts as access ended (a promise's rejection too, in settleLater). */
  private ask(): string | null | Promise<string | null> {
    let answer: string | null | Promise<string | null>;
    try {
      answer = this.check();
    } catch {
      answer = null;
    }
    return answer;
  }

  /** The answer of an async check, checked again while forced checks were asked meanwhile. */
  private async settleLater(answer: Promise<string | null>): Promise<boolean> {
    for (;;) {
      const scope = await answer.catch(() => null);
      if (!this.again || scope === null || this.closed) {
        this.again = false;
        this.checking = null;
        return this.settle(scope);
      }
      this.again = false;
      this.checkedAt = Date.now();
      answer = Promise.resolve(this.ask());
    }
  }

  private settle(scope: string | null): boolean {
    if (this.closed) return false;
    if (scope === null) {
      this.event('revoked', { reason: 'access to this project ended for this credential' });
      this.end();
      return false;
    }
    this.scope = scope;
    return true;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Sends `c` if it is newer than what the client has and visible in its scope. */
  deliver(c: CommitChanges): void {
    if (this.closed || c.projectVersion <= this.sentUpTo) return;
    this.sentUpTo = c.projectVersion;
    const visible = scopedCommit(this.scope, c);
    if (!visible) return;
    this.write(`id: ${c.projectVersion}\nevent: change\ndata: ${JSON.stringify(presentCommitEvent(this.projectId, visible))}\n\n`);
    if (this.res.writableLength > this.maxBufferBytes) this.resync();
  }

  /** An event without an id (it must not move the client's Last-Event-ID); `data.type` repeats its name, as in spec 6. */
  event(name: string, data: Record<string, unknown>): void {
    this.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  /** Tells the consumer to catch up through GET /sync/changelog from its last event id, then closes. */
  resync(): void {
    if (this.closed) return;
    this.event('resync', {
      reason: 'too far behind',
      cursor: this.sentUpTo,
      changelog: `/api/v1/sync/changelog?project_id=${encodeURIComponent(this.projectId)}`,
    });
    this.end();
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    // Sent with `Connection: close`: ending the stream closes its socket too.
    this.res.end();
    this.onClose(this);
  }

  private write(chunk: string): void {
    if (!this.closed) this.res.write(chunk);
  }
}
