import type { SecretBox } from '../../auth/secretBox.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { OAuthConnectionsTable } from '../../db/metadata/tables/oauth.ts';
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

type Row = OAuthConnectionsTable;

/**
 * The `oauth_connections` table, on the metadata store. The access and refresh tokens never reach
 * the database in the clear: they are one JSON object sealed with the `oauth-tokens` key and the
 * row's id as AAD (a sealed value copied onto another row does not open). Authorization is the caller's.
 */
export class OAuthConnections {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly box: SecretBox,
  ) {}

  async find(projectId: string, provider: string): Promise<OAuthConnection | null> {
    const r = await this.metadata.db.selectFrom('oauth_connections').selectAll().where('project_id', '=', projectId).where('provider', '=', provider).executeTakeFirst();
    return r ? this.fromRow(r) : null;
  }

  /** Stores a new connection, or replaces the project's connection to that provider (a reconnect clears needs_reauth). */
  async save(c: NewConnection): Promise<{ connection: OAuthConnection; created: boolean }> {
    const now = nowIso();
    const { row, created } = await this.metadata.transaction(async (trx) => {
      const existing = await trx.selectFrom('oauth_connections').select('id').where('project_id', '=', c.projectId).where('provider', '=', c.provider).executeTakeFirst();
      // The row keeps its id: the tokens are sealed to it.
      const id = existing?.id ?? newId('oac');
      const fields = {
        kind: c.kind,
        account: c.account,
        scopes: JSON.stringify(c.scopes),
        tokens_sealed: this.seal(id, c.accessToken, c.refreshToken),
        expires_at: c.expiresAt,
        needs_reauth: 0,
        connected_by: c.connectedBy,
        connected_at: now,
        updated_at: now,
      };
      const row: Row = { id, project_id: c.projectId, provider: c.provider, ...fields };
      if (existing) await trx.updateTable('oauth_connections').set(fields).where('id', '=', id).execute();
      else await trx.insertInto('oauth_connections').values(row).execute();
      return { row, created: !existing };
    });
    return { connection: this.fromRow(row), created };
  }

  /**
   * After a refresh: the new tokens (a provider that rotates refresh tokens sends a new one), only
   * if the stored access token is still `replacing`, the one refreshed. False when it is not: a
   * reconnect (or another refresh) came first, and its grant stays. The sealed value is the
   * compare-and-set's witness: every write seals afresh, so it differs after any other write.
   */
  async updateTokens(id: string, t: Pick<OAuthConnection, 'accessToken' | 'refreshToken' | 'expiresAt' | 'scopes'>, replacing: string): Promise<boolean> {
    const row = await this.metadata.db.selectFrom('oauth_connections').select('tokens_sealed').where('id', '=', id).executeTakeFirst();
    if (!row || this.opened(id, row.tokens_sealed).access !== replacing) return false;
    const r = await this.metadata.db
      .updateTable('oauth_connections')
      .set({ tokens_sealed: this.seal(id, t.accessToken, t.refreshToken), expires_at: t.expiresAt, scopes: JSON.stringify(t.scopes), updated_at: nowIso() })
      .where('id', '=', id)
      .where('tokens_sealed', '=', row.tokens_sealed)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  /** True when this call set the mark (so a hook fires once per lost connection). */
  async markNeedsReauth(id: string): Promise<boolean> {
    const r = await this.metadata.db.updateTable('oauth_connections').set({ needs_reauth: 1, updated_at: nowIso() }).where('id', '=', id).where('needs_reauth', '=', 0).executeTakeFirst();
    return r.numUpdatedRows > 0n;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.metadata.db.deleteFrom('oauth_connections').where('id', '=', id).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  private seal(id: string, accessToken: string, refreshToken: string | null): string {
    return this.box.seal(JSON.stringify({ access: accessToken, refresh: refreshToken }), id);
  }

  private opened(id: string, sealed: string): { access: string; refresh: string | null } {
    return JSON.parse(this.box.open(sealed, id).toString('utf8')) as { access: string; refresh: string | null };
  }

  private fromRow(r: Row): OAuthConnection {
    const tokens = this.opened(r.id, r.tokens_sealed);
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
