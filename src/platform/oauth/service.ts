import { SecretBox } from '../../auth/secretBox.ts';
import type { Settings } from '../../config/settings.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { UserStore } from '../../domain/users/userStore.ts';
import type { Logger } from '../../logging/logger.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { KeyedLock } from '../../util/keyedLock.ts';
import type { CredentialSource } from '../runtime/credentials.ts';
import { OAuthConnections } from './oauthConnectionStore.ts';
import { ProjectCredentials } from './credentialSource.ts';
import { ConnectionEvents, type ConnectionListener } from './events.ts';
import { OAuthService } from './oauthService.ts';
import { outboundFetch } from './outboundFetch.ts';
import { PendingStates } from './pendingStates.ts';
import { ProviderRegistry, type ProviderOverrides } from './registry.ts';
import { StateTokens } from './stateTokens.ts';

export type { ConnectionListener } from './events.ts';
export type { ProviderOverrides } from './registry.ts';
export { OAuthService } from './oauthService.ts';

export interface OAuthDeps {
  metadata: MetadataStore;
  /** The data folder's signing secret: the tokens' encryption key and the states' signing key derive from it. */
  signingSecret: Uint8Array;
  /** Read at each use: OAuth apps (`oauthClients`), the public URL (`baseUrl`), `urlFetchAllowPrivate`. */
  settings: () => Settings;
  /** Checks, at the callback, that the state's user may still write the project. */
  authorizer: Pick<Authorizer, 'requireProject'>;
  users: Pick<UserStore, 'findById'>;
  logger: Logger;
  /** A project's connection to a provider was disconnected (DELETE …/disconnect). */
  onDisconnect?: ConnectionListener;
  /** A connection lost its authorization: its token or refresh was refused (needs_reauth). */
  onNeedsReauth?: ConnectionListener;
  /** Per provider id: OAuth endpoints and API base elsewhere than the public ones (a local fake provider). */
  overrides?: Record<string, ProviderOverrides>;
}

/** OAuth (spec 4.10): the service the routes call, and the credentials the sync runtime uses. */
export interface OAuth {
  service: OAuthService;
  credentials: CredentialSource;
}

/**
 * Builds OAuth and token connections per project. Tokens are sealed at rest under a key derived
 * from the signing secret (purpose `oauth-tokens`, the row id as AAD); every request to a
 * provider goes through the outbound guard. More listeners may be added later with
 * `service.onDisconnect` / `service.onNeedsReauth`.
 */
export function createOAuth(d: OAuthDeps): OAuth {
  const providers = new ProviderRegistry({ settings: d.settings, fetch: outboundFetch(() => d.settings().urlFetchAllowPrivate), overrides: d.overrides });
  const store = new OAuthConnections(d.metadata, new SecretBox(d.signingSecret, 'oauth-tokens'));
  const events = new ConnectionEvents(d.logger);
  if (d.onDisconnect) events.on('disconnected', d.onDisconnect);
  if (d.onNeedsReauth) events.on('needsReauth', d.onNeedsReauth);
  const lock = new KeyedLock();
  const service = new OAuthService({
    providers,
    store,
    pending: new PendingStates(d.metadata, new SecretBox(d.signingSecret, 'oauth-pkce')),
    states: new StateTokens(d.signingSecret),
    lock,
    events,
    authorizer: d.authorizer,
    users: d.users,
    logger: d.logger,
    publicUrl: () => d.settings().baseUrl,
  });
  return { service, credentials: new ProjectCredentials({ store, providers, lock, events, logger: d.logger }) };
}
