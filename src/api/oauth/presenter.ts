import type { ConnectionInfo, DisconnectOutcome } from '../../platform/oauth/oauthService.ts';

/** A connection's status: never its tokens (the service does not hand them out). */
export function presentConnection(i: ConnectionInfo) {
  const c = i.connection;
  return {
    provider: i.provider.id,
    project_id: i.projectId,
    connected: c !== null,
    kind: c?.kind ?? null,
    account: c?.account ?? null,
    scopes: c?.scopes ?? [],
    expires_at: c?.expiresAt ?? null,
    needs_reauth: c?.needsReauth ?? false,
    connected_at: c?.connectedAt ?? null,
    oauth_configured: i.oauthConfigured,
  };
}

export function presentDisconnect(provider: string, projectId: string, o: DisconnectOutcome) {
  return {
    provider,
    project_id: projectId,
    disconnected: true as const,
    revoked: o.revoked,
    revocation_error: o.revocationError,
    revoke_manually: o.revokeManually,
  };
}
