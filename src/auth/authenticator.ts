import { sql } from 'kysely';
import { MetadataCache } from '../db/metadata/metadataCache.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import type { UserStore } from '../domain/users/userStore.ts';
import type { Logger } from '../logging/logger.ts';
import { hashAccessKey, looksLikeAccessKey } from './accessKeys.ts';
import type { AccessTokens } from './accessTokens.ts';
import type { Principal } from './principal.ts';

/** last_used_at is informative; refreshing it at most once a minute keeps reads free of writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A user token's principal with the sign-in it is bound to (cookie sessions only) and its expiry. */
export interface UserSession {
  principal: Principal;
  sessionId: string | null;
  expiresAtMs: number;
}

/** Whether a sign-in (a refresh-token family) still stands: RefreshTokens answers it. */
export interface SessionLiveness {
  isLive(sessionId: string): Promise<boolean>;
}

/** Turns a bearer credential (user JWT or access key) into a principal, or null when it is not valid. */
export class Authenticator {
  /** Active connections by key hash: a key's look-up runs on every request it makes. */
  private readonly keys: MetadataCache<string, ConnectionRecord>;
  /** When this process last stamped a key's last_used_at, by connection (a cached record keeps the stamp it was read with). */
  private readonly stamped = new Map<string, number>();

  constructor(
    private readonly metadata: MetadataStore,
    private readonly users: UserStore,
    private readonly tokens: AccessTokens,
    private readonly anonKey: string | null = null,
    private readonly sessions: SessionLiveness | null = null,
    private readonly logger: Pick<Logger, 'warn'> | null = null,
  ) {
    this.keys = new MetadataCache(metadata.changes, 10_000);
  }

  /** The deployment's public anonymous key: an identifier, never a credential. */
  isAnonKey(token: string): boolean {
    return this.anonKey !== null && token === this.anonKey;
  }

  async authenticate(token: string): Promise<Principal | null> {
    if (looksLikeAccessKey(token)) return this.byAccessKey(token);
    return (await this.userSession(token))?.principal ?? null;
  }

  /**
   * A user token's principal and session. A token bound to a sign-in (the dashboard's cookie
   * session) stops working the moment that sign-in is revoked, not only when it expires, in
   * whatever header or cookie it arrives.
   */
  async userSession(token: string): Promise<UserSession | null> {
    const claims = await this.tokens.verify(token);
    if (!claims) return null;
    if (claims.sessionId !== null && !(this.sessions && (await this.sessions.isLive(claims.sessionId)))) return null;
    const user = await this.users.findById(claims.userId);
    return user ? { principal: { kind: 'user', id: user.id, user }, sessionId: claims.sessionId, expiresAtMs: claims.expiresAtMs } : null;
  }

  /**
   * The principal as it stands now: null once its key was revoked or deleted or its user
   * deleted. Long-lived streams call this to notice that access ended after they were opened.
   */
  async current(principal: Pick<Principal, 'kind' | 'id'>): Promise<Principal | null> {
    if (principal.kind === 'user') {
      const user = await this.users.findById(principal.id);
      return user ? { kind: 'user', id: user.id, user } : null;
    }
    const connection = await this.metadata.db.selectFrom('connections').selectAll().where('id', '=', principal.id).where('status', '=', 'active').executeTakeFirst();
    return connection ? { kind: 'key', id: connection.id, connection } : null;
  }

  private async byAccessKey(key: string): Promise<Principal | null> {
    const hash = hashAccessKey(key);
    const connection = await this.keys.get(hash, () =>
      this.metadata.db.selectFrom('connections').selectAll().where('key_hash', '=', hash).where('status', '=', 'active').executeTakeFirst(),
    );
    if (!connection) return null;
    this.keyUsed(connection);
    return { kind: 'key', id: connection.id, connection };
  }

  /**
   * Records that a connection's key was used (last_used_at, at most once a minute per key and
   * process); for gates that check a key themselves. Off the request's path: the request does not
   * wait for it, and a failure only leaves the stamp older. The statement is plain SQL so that the
   * metadata caches do not count it as a change (on PostgreSQL the tables' triggers skip that
   * column too): a key's use must not empty every process's caches.
   */
  keyUsed(connection: ConnectionRecord): void {
    const now = Date.now();
    const last = Math.max(connection.last_used_at ? Date.parse(connection.last_used_at) : 0, this.stamped.get(connection.id) ?? 0);
    if (now - last <= LAST_USED_RESOLUTION_MS) return;
    if (this.stamped.size >= 10_000) this.stamped.clear();
    this.stamped.set(connection.id, now);
    const stamp = new Date(now).toISOString();
    connection.last_used_at = stamp;
    sql`UPDATE connections SET last_used_at = ${stamp} WHERE id = ${connection.id}`.execute(this.metadata.db).catch((err: unknown) => {
      this.logger?.warn({ err, connection: connection.id }, 'could not record the use of an access key');
    });
  }
}

/** The bearer token of an Authorization header, or null when absent or not a bearer header. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
