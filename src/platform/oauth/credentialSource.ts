import type { Logger } from '../../logging/logger.ts';
import type { KeyedLock } from '../../util/keyedLock.ts';
import { NeedsReauth, type CredentialSource, type SourceCredential } from '../runtime/credentials.ts';
import type { OAuthConnection, OAuthConnections } from './oauthConnectionStore.ts';
import type { ConnectionEvents } from './events.ts';
import { GrantRefused } from './oauthClient.ts';
import type { ProviderRegistry } from './registry.ts';

/** An access token this close to its expiry is refreshed before use (clocks differ, requests take time). */
export const REFRESH_MARGIN_MS = 60_000;

/** The lock key of one connection: refreshes, reconnects and disconnects of it never interleave. */
export const connectionKey = (projectId: string, provider: string) => `${projectId}\u0000${provider}`;

/**
 * The runtime's credentials (src/platform/runtime/credentials.ts) from the project's stored
 * connections. An OAuth access token about to expire is refreshed first, one refresh per
 * connection at a time (others wait and get its result). A refresh the provider refuses, or a
 * token it refuses that cannot be refreshed, marks the connection needs_reauth, tells the
 * listeners (the runtime pauses the syncs) and throws NeedsReauth; a provider that cannot be
 * reached throws its ProviderError and leaves the connection as it was.
 */
export class ProjectCredentials implements CredentialSource {
  constructor(
    private readonly d: {
      store: OAuthConnections;
      providers: ProviderRegistry;
      lock: KeyedLock;
      events: ConnectionEvents;
      logger: Logger;
    },
  ) {}

  async get(projectId: string, provider: string): Promise<SourceCredential> {
    const c = await this.usable(projectId, provider);
    if (!expiresSoon(c)) return credentialOf(c);
    return this.d.lock.run(connectionKey(projectId, provider), async () => {
      // Another caller may have refreshed while this one waited.
      const current = await this.usable(projectId, provider);
      return expiresSoon(current) ? this.refresh(current) : credentialOf(current);
    });
  }

  async afterUnauthorized(projectId: string, provider: string, rejected: SourceCredential): Promise<SourceCredential> {
    return this.d.lock.run(connectionKey(projectId, provider), async () => {
      const c = await this.usable(projectId, provider);
      // Refreshed (or reconnected) since `rejected` was handed out: the stored one is newer.
      if (c.accessToken !== rejected.accessToken) return expiresSoon(c) ? this.refresh(c) : credentialOf(c);
      if (c.kind === 'oauth' && c.refreshToken) return this.refresh(c);
      throw await this.lost(c, `${this.name(c)} refused the stored ${c.kind === 'token' ? 'token' : 'access token'}.`);
    });
  }

  /** The provider refused the credential even after a refresh, or said so in its own way: needs_reauth. */
  async markNeedsReauth(projectId: string, provider: string): Promise<void> {
    const c = await this.d.store.find(projectId, provider);
    if (c && !c.needsReauth) await this.lost(c, `${this.name(c)} refused the connection's credential.`);
  }

  /** The stored connection, unless there is none or it needs authorizing again. */
  private async usable(projectId: string, provider: string): Promise<OAuthConnection> {
    const c = await this.d.store.find(projectId, provider);
    if (!c) {
      throw new NeedsReauth(provider, `The project has no ${provider} connection: connect it with GET /oauth/${provider}/authorize or POST /oauth/${provider}/token.`);
    }
    if (c.needsReauth) throw new NeedsReauth(provider, reconnectHint(c));
    return c;
  }

  /** Runs under the connection's lock. */
  private async refresh(c: OAuthConnection): Promise<SourceCredential> {
    if (c.kind !== 'oauth' || !c.refreshToken) throw await this.lost(c, `The ${this.name(c)} access token expired and cannot be refreshed.`);
    const def = this.d.providers.get(c.provider);
    const app = this.d.providers.app(def);
    if (!app) throw await this.lost(c, `${def.displayName} OAuth is no longer configured on this server, so the token cannot be refreshed.`);
    const { client } = this.d.providers.client(def);
    let grant;
    try {
      grant = await client.refresh(c.refreshToken);
    } catch (err) {
      if (err instanceof GrantRefused) throw await this.lost(c, `${def.displayName} refused to refresh the token: ${err.error}${err.description ? ` (${err.description})` : ''}.`);
      throw err;
    }
    const next = {
      accessToken: grant.accessToken,
      // Providers that rotate refresh tokens send a new one; the others keep the old one valid.
      refreshToken: grant.refreshToken ?? c.refreshToken,
      expiresAt: grant.expiresAt,
      scopes: grant.scopes ?? c.scopes,
    };
    if (!(await this.d.store.updateTokens(c.id, next, c.accessToken))) {
      // Reconnected (from another process) while this refresh was under way: the new grant stays and is used.
      this.d.logger.info({ project_id: c.projectId, provider: c.provider }, 'oauth token refreshed, but the connection was reconnected meanwhile: keeping the new one');
      return credentialOf(await this.usable(c.projectId, c.provider));
    }
    this.d.logger.info({ project_id: c.projectId, provider: c.provider, expires_at: next.expiresAt }, 'oauth token refreshed');
    return credentialOf({ ...c, ...next });
  }

  /** Marks the connection needs_reauth (telling the listeners once) and returns the error to throw. */
  private async lost(c: OAuthConnection, why: string): Promise<NeedsReauth> {
    if (await this.d.store.markNeedsReauth(c.id)) {
      this.d.logger.warn({ project_id: c.projectId, provider: c.provider, reason: why }, 'oauth connection needs reauthorization');
      await this.d.events.emit('needsReauth', c.projectId, c.provider);
    }
    return new NeedsReauth(c.provider, `${why} ${reconnectHint(c)}`);
  }

  private name(c: OAuthConnection): string {
    return this.d.providers.find(c.provider)?.displayName ?? c.provider;
  }
}

const expiresSoon = (c: OAuthConnection): boolean => c.expiresAt !== null && Date.parse(c.expiresAt) - REFRESH_MARGIN_MS <= Date.now();

const credentialOf = (c: OAuthConnection): SourceCredential => ({ kind: c.kind, accessToken: c.accessToken, scopes: c.scopes, account: c.account });

function reconnectHint(c: OAuthConnection): string {
  const how = c.kind === 'oauth' ? `GET /oauth/${c.provider}/authorize` : `POST /oauth/${c.provider}/token`;
  return `The ${c.provider} connection needs to be authorized again: ${how}.`;
}
