import type { Principal } from '../../auth/principal.ts';
import type { UserStore } from '../../domain/users/userStore.ts';
import { asDomainError, DomainError } from '../../errors/domainError.ts';
import type { Logger } from '../../logging/logger.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { newId } from '../../util/ids.ts';
import type { KeyedLock } from '../../util/keyedLock.ts';
import { ProviderError } from '../runtime/providerError.ts';
import type { NewConnection, OAuthConnection, OAuthConnections } from './oauthConnectionStore.ts';
import { connectionKey } from './credentialSource.ts';
import { asUpstream, TokenRefused } from './errors.ts';
import type { ConnectionEvents, ConnectionListener } from './events.ts';
import { GrantRefused } from './oauthClient.ts';
import type { PendingState, PendingStates } from './pendingStates.ts';
import { newPkce } from './pkce.ts';
import type { ProviderDef } from './providers/types.ts';
import { callbackUrlOf, checkedRedirect } from './redirects.ts';
import type { ProviderRegistry } from './registry.ts';
import { STATE_TTL_SECONDS, StateRefused, type StateClaims, type StateTokens } from './stateTokens.ts';

/** A connection as it may be shown: everything but the tokens. */
export type ConnectionRecord = Omit<OAuthConnection, 'accessToken' | 'refreshToken'>;

export interface ConnectionInfo {
  provider: ProviderDef;
  projectId: string;
  /** null: the project has no connection to the provider. */
  connection: ConnectionRecord | null;
  /** Whether the provider's OAuth app is configured (the token route works without it). */
  oauthConfigured: boolean;
}

/** What the provider sent the browser back with (GET /oauth/callback), or a client posted. */
export interface CallbackInput {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

/**
 * A callback that did not connect. `redirectAfter` is where the browser may still be sent (with
 * the failure) once the state proved authentic; null when it did not.
 */
export class CallbackFailed extends Error {
  constructor(
    readonly error: DomainError,
    readonly redirectAfter: string | null,
  ) {
    super(error.message);
    this.name = 'CallbackFailed';
  }
}

export interface DisconnectOutcome {
  /** Whether the provider confirmed the revocation of the tokens. */
  revoked: boolean;
  /** Why not, when it was attempted and failed (the tokens are deleted here anyway). */
  revocationError: string | null;
  /** Where a person removes the access by hand when it was not revoked here. */
  revokeManually: string | null;
}

export interface OAuthServiceDeps {
  providers: ProviderRegistry;
  store: OAuthConnections;
  pending: PendingStates;
  states: StateTokens;
  lock: KeyedLock;
  events: ConnectionEvents;
  authorizer: Pick<Authorizer, 'requireProject'>;
  users: Pick<UserStore, 'findById'>;
  logger: Logger;
  /** The service's public URL (settings `baseUrl`, CNS_BASE_URL), read at each use. */
  publicUrl: () => string;
}

/**
 * OAuth and token connections per project (spec 4.10): the authorization-code flow with a signed,
 * single-use state and PKCE, personal tokens checked against the provider, status and
 * disconnection with revocation at the provider. Routes check who may call (authorize, token,
 * disconnect: content:write, a user; status: project:read); the callback, which carries no
 * credential, gets its authority from the state and checks the state's user again.
 */
export class OAuthService {
  constructor(private readonly d: OAuthServiceDeps) {}

  /** The provider, resolved; 404 for one the registry does not know. */
  provider(id: string): ProviderDef {
    const def = this.d.providers.find(id);
    if (!def) throw new DomainError('NOT_FOUND', `OAuth provider ${id} not found.`);
    return def;
  }

  /** The address to register with every OAuth app. */
  callbackUrl(): string {
    return callbackUrlOf(this.d.publicUrl());
  }

  /** Starts an authorization: the provider's URL with a signed state (and PKCE), valid for 10 minutes. */
  async authorize(userId: string, projectId: string, providerId: string, redirectUri?: string): Promise<{ authorizationUrl: string; expiresAt: string }> {
    const def = this.provider(providerId);
    const { client } = this.d.providers.client(def);
    const redirectAfter = redirectUri === undefined ? null : checkedRedirect(redirectUri, this.d.publicUrl());
    const id = newId('ost', 16);
    const pkce = def.pkce ? await newPkce() : null;
    const now = Date.now();
    const expiresAtMs = now + STATE_TTL_SECONDS * 1000;
    await this.d.pending.add({ id, userId, projectId, provider: def.id, verifier: pkce?.verifier ?? null, redirectAfter, expiresAtMs });
    const state = await this.d.states.sign({ id, userId, projectId, provider: def.id }, now);
    const url = client.authorizationUrl({ redirectUri: this.callbackUrl(), state, codeChallenge: pkce?.challenge ?? null });
    return { authorizationUrl: url.toString(), expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /**
   * Completes an authorization: checks the state (signature, expiry, unused), that its user may
   * still write the project (and, with `callerId`, is the caller), exchanges the code and stores
   * the tokens. Throws CallbackFailed.
   */
  async callback(input: CallbackInput, callerId?: string, expectedProvider?: string): Promise<{ info: ConnectionInfo; created: boolean; redirectAfter: string | null }> {
    const { claims, pending } = await this.takeState(input.state, callerId, expectedProvider);
    const redirectAfter = this.safeRedirect(pending.redirectAfter);
    const fail = (e: DomainError) => new CallbackFailed(e, redirectAfter);
    const def = this.d.providers.find(claims.provider);
    if (!def) throw fail(fieldError('state', `Unknown provider ${claims.provider}.`));
    if (input.error) {
      const why = `${input.error}${input.error_description ? ` (${input.error_description})` : ''}`;
      throw fail(new DomainError('FORBIDDEN', `${def.displayName} did not grant access: ${why}.`));
    }
    if (!input.code) throw fail(fieldError('code', 'code is missing.'));
    try {
      await this.requireWriter(claims.userId, claims.projectId);
      const saved = await this.exchange(def, claims, input.code, input.state!, pending.verifier);
      return { ...saved, redirectAfter };
    } catch (err) {
      if (err instanceof GrantRefused) throw fail(new TokenRefused('code', `${def.displayName} refused the authorization code: ${err.error}${err.description ? ` (${err.description})` : ''}.`));
      const known = asDomainError(asUpstream(err));
      if (known) throw fail(known);
      throw err;
    }
  }

  async status(projectId: string, providerId: string): Promise<ConnectionInfo> {
    const def = this.provider(providerId);
    return this.info(def, projectId, await this.d.store.find(projectId, def.id));
  }

  /** Stores a personal or integration token once the provider accepted it (422 with its words otherwise). */
  async connectToken(userId: string, projectId: string, providerId: string, token: string): Promise<{ info: ConnectionInfo; created: boolean }> {
    const def = this.provider(providerId);
    let identity;
    try {
      identity = await def.identify(this.d.providers.call(def), token, 'token');
    } catch (err) {
      throw asUpstream(err);
    }
    return this.save({
      projectId,
      provider: def.id,
      kind: 'token',
      account: identity.account,
      scopes: identity.scopes ?? [],
      accessToken: token,
      refreshToken: null,
      expiresAt: null,
      connectedBy: userId,
    });
  }

  /**
   * Revokes the tokens at the provider where it offers revocation, deletes them here whatever the
   * provider said (a failed revocation is reported), and tells the listeners (the runtime pauses
   * the syncs that used the connection).
   */
  async disconnect(projectId: string, providerId: string): Promise<DisconnectOutcome> {
    const def = this.provider(providerId);
    const outcome = await this.d.lock.run(connectionKey(projectId, def.id), async () => {
      const c = await this.d.store.find(projectId, def.id);
      if (!c) throw new DomainError('NOT_FOUND', `${def.displayName} connection of this project not found.`);
      const result = await this.revoke(def, c);
      await this.d.store.delete(c.id);
      return result;
    });
    this.d.logger.info({ project_id: projectId, provider: def.id, revoked: outcome.revoked }, 'oauth disconnected');
    await this.d.events.emit('disconnected', projectId, def.id);
    return outcome;
  }

  onDisconnect(fn: ConnectionListener): () => void {
    return this.d.events.on('disconnected', fn);
  }

  onNeedsReauth(fn: ConnectionListener): () => void {
    return this.d.events.on('needsReauth', fn);
  }

  /**
   * The state's claims and its pending request, which is used up here: a state that is missing,
   * altered, expired or already used is refused (the browser is sent nowhere: nothing proves
   * where it came from), and so is another user's, before it is used up.
   */
  private async takeState(state: string | undefined, callerId?: string, expectedProvider?: string): Promise<{ claims: StateClaims; pending: PendingState }> {
    if (!state) throw new CallbackFailed(fieldError('state', 'state is missing: start again with GET /oauth/{provider}/authorize.'), null);
    let claims: StateClaims;
    try {
      claims = await this.d.states.verify(state);
    } catch (err) {
      if (err instanceof StateRefused) throw new CallbackFailed(fieldError('state', err.message), null);
      throw err;
    }
    if (callerId !== undefined && claims.userId !== callerId) throw new CallbackFailed(new DomainError('FORBIDDEN', 'This authorization was started by another user.'), null);
    if (expectedProvider !== undefined && claims.provider !== expectedProvider) {
      throw new CallbackFailed(fieldError('state', `The state was issued for ${claims.provider}, not ${expectedProvider}.`), null);
    }
    const pending = await this.d.pending.take(claims.id);
    if (!pending || pending.userId !== claims.userId || pending.projectId !== claims.projectId || pending.provider !== claims.provider) {
      const message = 'This authorization was already completed (a state and its code are accepted once): start again with GET /oauth/{provider}/authorize.';
      throw new CallbackFailed(fieldError('state', message), null);
    }
    return { claims, pending };
  }

  /** The code for tokens (with the PKCE verifier), the account they belong to, stored. */
  private async exchange(def: ProviderDef, claims: StateClaims, code: string, state: string, verifier: string | null): Promise<{ info: ConnectionInfo; created: boolean }> {
    const { client } = this.d.providers.client(def);
    // The URL the provider sent the browser to: openid-client takes the code from it and the redirect_uri from its base.
    const current = new URL(this.callbackUrl());
    current.searchParams.set('code', code);
    current.searchParams.set('state', state);
    const grant = await client.exchange(current, { state, verifier });
    let account = def.accountFromGrant?.(grant.answer) ?? null;
    let scopes = grant.scopes;
    if (account === null) {
      // Best effort: the grant stands even when the identity call fails.
      try {
        const identity = await def.identify(this.d.providers.call(def), grant.accessToken, 'oauth');
        account = identity.account;
        scopes ??= identity.scopes ?? null;
      } catch (err) {
        this.d.logger.warn({ provider: def.id, project_id: claims.projectId, err: (err as Error).message }, 'oauth account lookup failed');
      }
    }
    return this.save({
      projectId: claims.projectId,
      provider: def.id,
      kind: 'oauth',
      account,
      // As granted; as requested when the answer does not say.
      scopes: scopes ?? def.scopes,
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: grant.expiresAt,
      connectedBy: claims.userId,
    });
  }

  private async revoke(def: ProviderDef, c: OAuthConnection): Promise<DisconnectOutcome> {
    const manual = { revoked: false, revocationError: null, revokeManually: def.manualRevocation };
    // Personal tokens belong to the person, not to our OAuth app: only they can revoke them.
    if (c.kind !== 'oauth' || !def.revoke) return manual;
    const app = this.d.providers.app(def);
    if (!app) return { ...manual, revocationError: `${def.displayName} OAuth is not configured on this server, so the tokens could not be revoked there.` };
    const { client } = this.d.providers.client(def);
    try {
      await def.revoke({
        accessToken: c.accessToken,
        refreshToken: c.refreshToken,
        client: app,
        call: this.d.providers.call(def),
        rfc7009: (token, hint) => client.revoke(token, hint),
      });
      return { revoked: true, revocationError: null, revokeManually: null };
    } catch (err) {
      const message = err instanceof GrantRefused || err instanceof ProviderError ? err.message : `revocation failed: ${(err as Error).message}`;
      this.d.logger.warn({ project_id: c.projectId, provider: def.id, err: message }, 'oauth revocation failed');
      return { ...manual, revocationError: message };
    }
  }

  private async save(c: NewConnection): Promise<{ info: ConnectionInfo; created: boolean }> {
    const def = this.provider(c.provider);
    const { connection, created } = await this.d.lock.run(connectionKey(c.projectId, c.provider), () => this.d.store.save(c));
    this.d.logger.info({ project_id: c.projectId, provider: c.provider, kind: c.kind, created }, 'oauth connected');
    return { info: this.info(def, c.projectId, connection), created };
  }

  private info(def: ProviderDef, projectId: string, c: OAuthConnection | null): ConnectionInfo {
    let connection: ConnectionRecord | null = null;
    if (c) {
      const { accessToken: _a, refreshToken: _r, ...shown } = c;
      connection = shown;
    }
    return { provider: def, projectId, connection, oauthConfigured: this.d.providers.app(def) !== null };
  }

  /** The state's user must still exist and be able to write the project (a callback carries no credential). */
  private async requireWriter(userId: string, projectId: string): Promise<void> {
    const user = this.d.users.findById(userId);
    if (!user) throw new DomainError('FORBIDDEN', 'The user who started this authorization no longer exists.');
    const principal: Principal = { kind: 'user', id: user.id, user };
    await this.d.authorizer.requireProject(principal, projectId, 'content:write');
  }

  /** The request's redirect checked again against the current public URL (it was when given). */
  private safeRedirect(value: string | null): string | null {
    if (value === null) return null;
    try {
      return checkedRedirect(value, this.d.publicUrl());
    } catch {
      return null;
    }
  }
}

const fieldError = (field: string, message: string): DomainError => new DomainError('VALIDATION_ERROR', message, [{ field, message }]);
