import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { statementCache } from '../db/statements.ts';
import { FreshCache } from '../db/freshCache.ts';
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
  /** isLive runs on every cookie-authenticated request: its statement is prepared once. */
  private readonly sql: ReturnType<typeof statementCache>;
  /** Live sign-ins by family, kept while the database stays unchanged. */
  private readonly live: FreshCache<string, { live: true }>;

  constructor(
    private readonly db: Db,
    readonly ttlSeconds: number,
  ) {
    this.sql = statementCache(db);
    this.live = new FreshCache(db, 10_000, (v) => v);
  }

  issue(userId: string, familyId = newId('rtf')): string {
    const token = `cnsr_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    this.db
      .prepare(
        `INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(newId('rt'), userId, familyId, hash(token), now.toISOString(), new Date(now.getTime() + this.ttlSeconds * 1000).toISOString());
    return token;
  }

  rotate(token: string): RotateResult {
    return this.db
      .transaction((): RotateResult => {
        const row = this.db.prepare('SELECT * FROM refresh_tokens WHERE token_hash = ?').get(hash(token)) as
          | { id: string; user_id: string; family_id: string; expires_at: string; rotated_at: string | null; revoked_at: string | null }
          | undefined;
        if (!row) return { ok: false, reason: 'unknown' };
        if (row.revoked_at) return { ok: false, reason: 'revoked' };
        if (row.rotated_at) {
          this.revokeFamily(row.family_id);
          return { ok: false, reason: 'reused' };
        }
        if (row.expires_at <= nowIso()) return { ok: false, reason: 'expired' };
        this.db.prepare('UPDATE refresh_tokens SET rotated_at = ? WHERE id = ?').run(nowIso(), row.id);
        return { ok: true, userId: row.user_id, token: this.issue(row.user_id, row.family_id), familyId: row.family_id };
      })
      .immediate();
  }

  /** The sign-in (family) a token belongs to, whatever its state; null for an unknown token. */
  familyOf(token: string): string | null {
    const row = this.db.prepare('SELECT family_id FROM refresh_tokens WHERE token_hash = ?').get(hash(token)) as { family_id: string } | undefined;
    return row?.family_id ?? null;
  }

  /** False once a sign-in was revoked (logout, or a rotated token presented again): its cookie session ends with it. */
  isLive(familyId: string): boolean {
    const read = () => (this.sql('SELECT 1 FROM refresh_tokens WHERE family_id = ? AND revoked_at IS NULL LIMIT 1').get(familyId) === undefined ? undefined : LIVE);
    return this.live.get(familyId, read) !== undefined;
  }

  /** Logout: the presented token's whole family stops working. Returns false for an unknown token. */
  revoke(token: string): boolean {
    const family = this.familyOf(token);
    if (!family) return false;
    this.revokeFamily(family);
    return true;
  }

  private revokeFamily(familyId: string): void {
    this.db.prepare('UPDATE refresh_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE family_id = ?').run(nowIso(), familyId);
  }
}
