/**
 * A project's credential for one provider, as the runtime hands it to a connector's
 * `authHeaders`. Only ever held in memory: stored sealed (see `src/platform/oauth/`).
 */
export interface SourceCredential {
  /** `oauth`: from the authorization-code flow (may refresh); `token`: a personal or integration token. */
  kind: 'oauth' | 'token';
  accessToken: string;
  scopes: string[];
  account: string | null;
}

/** Where the runtime gets credentials; implemented by the OAuth service. */
export interface CredentialSource {
  /**
   * A usable credential of the project for the provider, refreshing an expired OAuth access
   * token first. Throws NeedsReauth when there is none, it is marked needs_reauth, or a refresh fails.
   */
  get(projectId: string, provider: string): Promise<SourceCredential>;
  /**
   * The provider answered 401 to `rejected`: refresh once when it can (an OAuth grant with a
   * refresh token, and only if `rejected` is still the stored token); otherwise mark the
   * connection needs_reauth and throw NeedsReauth.
   */
  afterUnauthorized(projectId: string, provider: string, rejected: SourceCredential): Promise<SourceCredential>;
  /**
   * The provider answered 401 again to the credential `afterUnauthorized` gave: mark the
   * connection needs_reauth (optional: a source without it is only told through NeedsReauth).
   */
  markNeedsReauth?(projectId: string, provider: string): Promise<void> | void;
}

/** The project must connect (or reconnect) the provider before its syncs can run. */
export class NeedsReauth extends Error {
  readonly code = 'NEEDS_REAUTH';
  constructor(
    readonly provider: string,
    message = `The ${provider} connection needs to be authorized again: GET /oauth/${provider}/authorize.`,
  ) {
    super(message);
    this.name = 'NeedsReauth';
  }
}
