import type { Statement } from 'better-sqlite3';
import type { SecretBox } from '../../auth/secretBox.ts';
import type { Db } from '../../db/database.ts';

/** An authorization request in flight (the row a signed state names). */
export interface PendingState {
  id: string;
  userId: string;
  projectId: string;
  provider: string;
  /** The PKCE verifier, opened; null for providers without PKCE. */
  verifier: string | null;
  /** Where the browser goes after the callback (checked when it was given). */
  redirectAfter: string | null;
  expiresAtMs: number;
}

interface Row {
  id: string;
  user_id: string;
  project_id: string;
  provider: string;
  verifier_sealed: string | null;
  redirect_after: string | null;
  expires_at: number;
}

/**
 * The `oauth_states` table: the server-side half of a state. `take` deletes the row as it reads
 * it, in one statement, so a state (and the code that came with it) is honoured once even when
 * two callbacks race. The PKCE verifier is sealed (AAD: the state's id).
 */
export class PendingStates {
  private readonly s: Record<'insert' | 'take' | 'purge', Statement>;

  constructor(
    db: Db,
    private readonly box: SecretBox,
  ) {
    this.s = {
      insert: db.prepare(`INSERT INTO oauth_states (id, user_id, project_id, provider, verifier_sealed, redirect_after, expires_at)
        VALUES (@id, @user_id, @project_id, @provider, @verifier_sealed, @redirect_after, @expires_at)`),
      take: db.prepare('DELETE FROM oauth_states WHERE id = ? RETURNING *'),
      purge: db.prepare('DELETE FROM oauth_states WHERE expires_at <= ?'),
    };
  }

  add(p: PendingState): void {
    // Requests nobody finished are dropped as new ones start: the table stays small.
    this.s.purge.run(Date.now());
    this.s.insert.run({
      id: p.id,
      user_id: p.userId,
      project_id: p.projectId,
      provider: p.provider,
      verifier_sealed: p.verifier === null ? null : this.box.seal(p.verifier, p.id),
      redirect_after: p.redirectAfter,
      expires_at: p.expiresAtMs,
    });
  }

  /** The pending request, removed; null when it was used already, never existed or has expired. */
  take(id: string, nowMs = Date.now()): PendingState | null {
    const r = this.s.take.get(id) as Row | undefined;
    if (!r || r.expires_at <= nowMs) return null;
    return {
      id: r.id,
      userId: r.user_id,
      projectId: r.project_id,
      provider: r.provider,
      verifier: r.verifier_sealed === null ? null : this.box.open(r.verifier_sealed, r.id).toString('utf8'),
      redirectAfter: r.redirect_after,
      expiresAtMs: r.expires_at,
    };
  }
}
