import { createHash, randomBytes } from 'node:crypto';
import { MetadataCache } from '../db/metadata/metadataCache.ts';
import type { MetadataDb, MetadataStore } from '../db/metadata/metadataStore.ts';
import { newId, nowIso } from '../util/ids.ts';

const LIVE = { live: true } as const;
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export type RotateResult = { ok: true; userId: string; token: string; familyId: string } | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reused' };

/**
 * Refresh tokens rotate: each use issues a successor in the same family and retires the used
 * one. Presenting a retired token again means it leaked, so the whole family is revoked.
 * Only hashes are stored.
 */
export class RefreshTokens {
  /** Live sign-ins by family (isLive runs on every cookie-authenticated request), kept while no cached table changed. */
  private readonly live: MetadataCache<string, { live: true }>;

  constructor(
    private readonly metadata: MetadataStore,
    readonly ttlSeconds: number,
  ) {
    this.live = new MetadataCache(metadata.changes, 10_000, (v) => v);
  }

  async issue(userId: string, familyId = newId('rtf')): Promise<string> {
    return this.insert(this.metadata.db, userId, familyId);
  }

  private async insert(db: MetadataDb, userId: string, familyId: string): Promise<string> {
    const token = `cnsr_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    await db
      .insertInto('refresh_tokens')
      .values({ id: newId('rt'), user_id: userId, family_id: familyId, token_hash: hash(token), created_at: now.toISOString(), expires_at: new Date(now.getTime() + this.ttlSeconds * 1000).toISOString() })
      .execute();
    return token;
  }

  rotate(token: string): Promise<RotateResult> {
    return this.metadata.transaction(async (trx): Promise<RotateResult> => {
      const row = await trx.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash(token)).executeTakeFirst();
      if (!row) return { ok: false, reason: 'unknown' };
      if (row.revoked_at) return { ok: false, reason: 'revoked' };
      if (row.expires_at <= nowIso() && !row.rotated_at) return { ok: false, reason: 'expired' };
      // One winner when the same token is presented twice at once: the other is a reuse.
      const retired = row.rotated_at
        ? 0n
        : (await trx.updateTable('refresh_tokens').set({ rotated_at: nowIso() }).where('id', '=', row.id).where('rotated_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst()).numUpdatedRows;
      if (retired === 0n) {
        await this.revokeFamily(trx, row.family_id);
        return { ok: false, reason: 'reused' };
      }
      return { ok: true, userId: row.user_id, token: await this.insert(trx, row.user_id, row.family_id), familyId: row.family_id };
    });
  }

  /** The sign-in (family) a token belongs to, whatever its state; null for an unknown token. */
  async familyOf(token: string): Promise<string | null> {
    const row = await this.metadata.db.selectFrom('refresh_tokens').select('family_id').where('token_hash', '=', hash(token)).executeTakeFirst();
    return row?.family_id ?? null;
  }

  /** False once a sign-in was revoked (logout, or a rotated token presented again): its cookie session ends with it. */
  async isLive(familyId: string): Promise<boolean> {
    const read = async () => {
      const row = await this.metadata.db.selectFrom('refresh_tokens').select('id').where('family_id', '=', familyId).where('revoked_at', 'is', null).limit(1).executeTakeFirst();
      return row ? LIVE : undefined;
    };
    return (await this.live.get(familyId, read)) !== undefined;
  }

  /** Logout: the presented token's whole family stops working. Returns false for an unknown token. */
  async revoke(token: string): Promise<boolean> {
    const family = await this.familyOf(token);
    if (!family) return false;
    await this.revokeFamily(this.metadata.db, family);
    return true;
  }

  private async revokeFamily(db: MetadataDb, familyId: string): Promise<void> {
    await db.updateTable('refresh_tokens').set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(nowIso())) })).where('family_id', '=', familyId).execute();
  }
}
