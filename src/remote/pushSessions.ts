import { randomBytes } from 'node:crypto';
import type { Actor } from '../content/contentStore.ts';

export interface PushSession {
  projectId: string;
  gitdir: string;
  /** The credential of the pusher: permissions are checked again when the hook runs. */
  token: string;
  /** Who pushes: the actor of a merge of refs/for/main. */
  actor?: Actor;
  /** Set once the hook accepted the push: what main is to move from and to. */
  accepted?: { before: string | null; after: string; commits: number };
  /** Called when the hook accepts the push, before main moves (registers it with the store). */
  onAccept?: (accepted: { before: string | null; after: string; commits: number }) => void;
}

/**
 * Pushes in flight, by a secret handed to their pre-receive hook through the environment. The
 * hook presents it to prove it runs for a push this service accepted, and the service answers
 * with everything it knows about that push.
 */
export class PushSessions {
  private readonly open = new Map<string, PushSession>();

  start(session: PushSession): string {
    const secret = randomBytes(32).toString('hex');
    this.open.set(secret, session);
    return secret;
  }

  find(secret: string): PushSession | null {
    return this.open.get(secret) ?? null;
  }

  end(secret: string): void {
    this.open.delete(secret);
  }
}
