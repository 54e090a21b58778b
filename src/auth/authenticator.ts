import type { Db } from '../db/database.ts';
import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import type { UserStore } from '../domain/users/userStore.ts';
import { hashAccessKey, looksLikeAccessKey } from './accessKeys.ts';
import type { AccessTokens } from './accessTokens.ts';
import type { Principal } from './principal.ts';
import { statementCache } from '../db/statements.ts';
import { FreshCache } from '../db/freshCache.ts';

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
  private readonly sql: ReturnType<typeof statementCache>;
  /** Active connections by key hash: a key's look-up runs on every request it makes. */
  private readonly keys: FreshCache<string, ConnectionRecord>;

  constructor(
    db: Db,
    private readonly users: UserStore,
    private readonly tokens: AccessTokens,
    private readonly anonKey: string | null = null,
    private readonly sessions: SessionLiveness | null = null,
  ) {
    this.sql = statementCache(db);
    this.keys = new FreshCache(db, 10_000);
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
    const user = this.users.findById(claims.userId);
    return user ? { principal: { kind: 'user', id: user.id, user }, sessionId: claims.sessionId, expiresAtMs: claims.expiresAtMs } : null;
  }

  /**
   * The principal as it stands now: null once its key was revoked or deleted or its user
   * deleted. Long-lived streams call this to notice that access ended after they were opened.
   */
  async current(principal: Pick<Principal, 'kind' | 'id'>): Promise<Principal | null> {
    if (principal.kind === 'user') {
      const user = this.users.findById(principal.id);
      return user ? { kind: 'user', id: user.id, user } : null;
    }
    const connection = this.sql("SELECT * FROM connections WHERE id = ? AND status = 'active'").get(principal.id) as ConnectionRecord | undefined;
    return connection ? { kind: 'key', id: connection.id, connection } : null;
  }

  private byAccessKey(key: string): Principal | null {
    const hash = hashAccessKey(key);
    const connection = this.keys.get(hash, () => this.sql("SELECT * FROM connections WHERE key_hash = ? AND status = 'active'").get(hash) as ConnectionRecord | undefined);
    if (!connection) return null;
    this.keyUsed(connection);
    return { kind: 'key', id: connection.id, connection };
  }

  /** Records that a connection's key was used (last_used_at, at most once a minute); for gates that check a key themselves. */
  keyUsed(connection: ConnectionRecord): void {
    const now = Date.now();
    if (!connection.last_used_at || now - Date.parse(connection.last_used_at) > LAST_USED_RESOLUTION_MS) {
      const stamp = new Date(now).toISOString();
      this.sql('UPDATE connections SET last_used_at = ? WHERE id = ?').run(stamp, connection.id);
      connection.last_used_at = stamp;
    }
  }
}

/** The bearer token of an Authorization header, or null when absent or not a bearer header. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
