import { timingSafeEqual } from 'node:crypto';
import { hashAccessKey, looksLikeAccessKey } from '../auth/accessKeys.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import { DomainError } from '../domain/errors.ts';
import { AppError } from '../http/errors.ts';
import type { CallContext, McpEnv } from './context.ts';

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Who may talk to an endpoint's MCP server, decided before any MCP message is read: an unknown
 * (or deleted) endpoint is 404; no credential, a key that is not this endpoint's key (an old
 * one after regeneration included) or an invalid token is 401; a user who may not read the
 * project is 404 as well; a paused or revoked endpoint is 403; an endpoint whose folder went to
 * the trash is 409. The endpoint's folder is followed to where it is now.
 */
export async function admit(env: McpEnv, authenticator: Authenticator, endpointId: string, token: string | null): Promise<CallContext> {
  const found = env.endpoints.find(endpointId);
  if (!found) throw new DomainError('NOT_FOUND', 'MCP endpoint not found.');
  const { connection } = found;
  if (!token) throw new AppError('UNAUTHORIZED', "This MCP endpoint needs Authorization: Bearer <the endpoint's key> (or a user access token).");
  let principal: Principal;
  if (looksLikeAccessKey(token)) {
    if (!sameHash(hashAccessKey(token), connection.key_hash)) throw new AppError('UNAUTHORIZED', "The key is not this MCP endpoint's key (a regenerated key replaces the old one).");
    requireActive(connection.status);
    // The key is this connection's (the app's authentication, which runs next, records its use).
    principal = { kind: 'key', id: connection.id, connection };
  } else {
    const user = await authenticator.authenticate(token);
    if (!user) throw new AppError('UNAUTHORIZED', 'The token is invalid, expired or revoked.');
    principal = user;
    try {
      env.authorizer.requireProject(principal, connection.project_id, 'content:read');
    } catch (e) {
      if ((e as DomainError).code === 'NOT_FOUND') throw new DomainError('NOT_FOUND', 'MCP endpoint not found.');
      throw e;
    }
    requireActive(connection.status);
  }
  const { endpoint, path } = env.endpoints.follow(found);
  // The key's scope follows the folder: the principal carries the connection as it is now.
  if (principal.kind === 'key') principal = { ...principal, connection: endpoint.connection };
  return { env, endpoint, root: path, principal };
}

function requireActive(status: string): void {
  if (status !== 'active') throw new DomainError('FORBIDDEN', `This MCP endpoint is ${status}.`, { status });
}
