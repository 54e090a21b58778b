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
  /** Version author text = the commit's author instead of the actor's. */
  keepCommitAuthor: boolean;
}

/** Expectations older than this are dropped (a push whose end was never reported). */
const MAX_AGE_MS = 60 * 60 * 1000;

/**
 * Pushes registered when their pre-receive check accepted them, per project, until whichever
 * path indexes their commits first (the post-push sync, an API write catching up on the moved
 * ref, the start-up reconciler) consumes them. Lives in the store (not in a project writer, which
 * may be evicted while idle).
 */
export class PushExpectations {
  private readonly byProject = new Map<string, (ExpectedPush & { at: number })[]>();

  expect(projectId: string, push: ExpectedPush): void {
    const now = Date.now();
    const list = (this.byProject.get(projectId) ?? []).filter((p) => now - p.at < MAX_AGE_MS && p.after !== push.after);
    list.push({ ...push, at: now });
    this.byProject.set(projectId, list);
  }

  pending(projectId: string): ExpectedPush[] {
    return this.byProject.get(projectId) ?? [];
  }

  /** Forgets a push (indexed, or ended without moving main). */
  forget(projectId: string, after: string): void {
    const list = this.byProject.get(projectId);
    if (!list) return;
    const rest = list.filter((p) => p.after !== after);
    if (rest.length > 0) this.byProject.set(projectId, rest);
    else this.byProject.delete(projectId);
  }

  forgetProject(projectId: string): void {
    this.byProject.delete(projectId);
  }
}
