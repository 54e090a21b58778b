import type { Statement } from 'better-sqlite3';
import type { SecretBox } from '../../auth/secretBox.ts';
import type { Db } from '../../db/database.ts';
import { newId, nowIso } from '../../util/ids.ts';

/** A project's connection to one provider, tokens opened (in memory only; never presented). */
export interface OAuthConnection {
  id: string;
  projectId: string;
  provider: string;
  kind: 'oauth' | 'token';
  account: string | null;
  scopes: string[];
  accessToken: string;
  refreshToken: string | null;
  /** ISO expiry of the access token; null: it does not expire. */
  expiresAt: string | null;
  needsReauth: boolean;
  connectedBy: string | null;
  connectedAt: string;
  updatedAt: string;
}

export type NewConnection = Pick<OAuthConnection, 'projectId' | 'provider' | 'kind' | 'account' | 'scopes' | 'accessToken' | 'refreshToken' | 'expiresAt' | 'connectedBy'>;

interface Row {
  id: string;
  project_id: string;
  provider: string;
  kind: 'oauth' | 'token';
  account: string | null;
  scopes: string;
  tokens_sealed: string;
  expires_at: string | null;
  needs_reauth: number;
  connected_by: string | null;
  connected_at: string;
  updated_at: string;
}

/**
 * The `oauth_connections` table. The access and refresh tokens never reach the database in the
 * clear: they are one JSON object sealed with the `oauth-tokens` key and the row's id as AAD
 * (a sealed value copied onto another row does not open). Authorization is the caller's.
 */
export class OAuthConnections {
  private readonly s: Record<'find' | 'insert' | 'replace' | 'tokens' | 'reauth' | 'remove', Statement>;

  constructor(
    db: Db,
    private readonly box: SecretBox,
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      find: p('SELECT * FROM oauth_connections WHERE project_id = ? AND provider = ?'),
      insert: p(`INSERT INTO oauth_connections (id, project_id, provider, kind, account, scopes, tokens_sealed, expires_at, needs_reauth, connected_by, connected_at, updated_at)
        VALUES (@id, @project_id, @provider, @kind, @account, @scopes, @tokens_sealed, @expires_at, 0, @connected_by, @connected_at, @updated_at)`),
      replace: p(`UPDATE oauth_connections SET kind = @kind, account = @account, scopes = @scopes, tokens_sealed = @tokens_sealed, expires_at = @expires_at,
        needs_reauth = 0, connected_by = @connected_by, connected_at = @connected_at, updated_at = @updated_at WHERE id = @id`),
      tokens: p('UPDATE oauth_connections SET tokens_sealed = @tokens_sealed, expires_at = @expires_at, scopes = @scopes, updated_at = @updated_at WHERE id = @id'),
      reauth: p('UPDATE oauth_connections SET needs_reauth = 1, updated_at = ? WHERE id = ? AND needs_reauth = 0'),
      remove: p('DELETE FROM oauth_connections WHERE id = ?'),
    };
  }

  find(projectId: string, provider: string): OAuthConnection | null {
    const r = this.s.find.get(projectId, provider) as Row | undefined;
    return r ? this.fromRow(r) : null;
  }

  /** Stores a new connection, or replaces the project's connection to that provider (a reconnect clears needs_reauth). */
  save(c: NewConnection): { connection: OAuthConnection; created: boolean } {
    const existing = this.s.find.get(c.projectId, c.provider) as Row | undefined;
    const now = nowIso();
    const id = existing?.id ?? newId('oac');
    const row = {
      id,
      project_id: c.projectId,
      provider: c.provider,
      kind: c.kind,
      account: c.account,
      scopes: JSON.stringify(c.scopes),
      tokens_sealed: this.seal(id, c.accessToken, c.refreshToken),
      expires_at: c.expiresAt,
      connected_by: c.connectedBy,
      connected_at: now,
      updated_at: now,
    };
    (existing ? this.s.replace : this.s.insert).run(row);
    return { connection: this.find(c.projectId, c.provider)!, created: !existing };
  }

  /** After a refresh: the new tokens (a provider that rotates refresh tokens sends a new one). */
  updateTokens(id: string, t: Pick<OAuthConnection, 'accessToken' | 'refreshToken' | 'expiresAt' | 'scopes'>): void {
    this.s.tokens.run({ id, tokens_sealed: this.seal(id, t.accessToken, t.refreshToken), expires_at: t.expiresAt, scopes: JSON.stringify(t.scopes), updated_at: nowIso() });
  }

  /** True when this call set the mark (so a hook fires once per lost connection). */
  markNeedsReauth(id: string): boolean {
    return this.s.reauth.run(nowIso(), id).changes > 0;
  }

  delete(id: string): boolean {
    return this.s.remove.run(id).changes > 0;
  }

  private seal(id: string, accessToken: string, refreshToken: string | null): string {
    return this.box.seal(JSON.stringify({ access: accessToken, refresh: refreshToken }), id);
  }

  private fromRow(r: Row): OAuthConnection {
    const tokens = JSON.parse(this.box.open(r.tokens_sealed, r.id).toString('utf8')) as { access: string; refresh: string | null };
    return {
      id: r.id,
      projectId: r.project_id,
      provider: r.provider,
      kind: r.kind,
      account: r.account,
      scopes: JSON.parse(r.scopes) as string[],
      accessToken: tokens.access,
      refreshToken: tokens.refresh,
      expiresAt: r.expires_at,
      needsReauth: r.needs_reauth === 1,
      connectedBy: r.connected_by,
      connectedAt: r.connected_at,
      updatedAt: r.updated_at,
    };
  }
}
