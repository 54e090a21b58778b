import type { SecretBox } from '../../auth/secretBox.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';

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

/**
 * The `oauth_states` table, on the metadata store: the server-side half of a state. `take` deletes
 * the row as it reads it, in one statement, so a state (and the code that came with it) is
 * honoured once even when two callbacks race. The PKCE verifier is sealed (AAD: the state's id).
 */
export class PendingStates {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly box: SecretBox,
  ) {}

  async add(p: PendingState): Promise<void> {
    const db = this.metadata.db;
    // Requests nobody finished are dropped as new ones start: the table stays small.
    await db.deleteFrom('oauth_states').where('expires_at', '<=', Date.now()).execute();
    await db
      .insertInto('oauth_states')
      .values({
        id: p.id,
        user_id: p.userId,
        project_id: p.projectId,
        provider: p.provider,
        verifier_sealed: p.verifier === null ? null : this.box.seal(p.verifier, p.id),
        redirect_after: p.redirectAfter,
        expires_at: p.expiresAtMs,
      })
      .execute();
  }

  /** The pending request, removed; null when it was used already, never existed or has expired. */
  async take(id: string, nowMs = Date.now()): Promise<PendingState | null> {
    const r = await this.metadata.db.deleteFrom('oauth_states').where('id', '=', id).returningAll().executeTakeFirst();
    if (!r || Number(r.expires_at) <= nowMs) return null;
    return {
      id: r.id,
      userId: r.user_id,
      projectId: r.project_id,
      provider: r.provider,
      verifier: r.verifier_sealed === null ? null : this.box.open(r.verifier_sealed, r.id).toString('utf8'),
      redirectAfter: r.redirect_after,
      expiresAtMs: Number(r.expires_at),
    };
  }
}
