import { timingSafeEqual } from 'node:crypto';
import { hashAccessKey, looksLikeAccessKey } from '../auth/accessKeys.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import { DomainError } from '../errors/domainError.ts';
import { AppError } from '../http/errors.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { CallContext, McpEnv } from './context.ts';

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** How the gate's refusals name the server's connection. */
export interface GateWords {
  /** "This MCP endpoint" */
  subject: string;
  /** "the endpoint's key" */
  key: string;
  /** "MCP endpoint not found." */
  notFound: string;
}

const endpointWords: GateWords = { subject: 'This MCP endpoint', key: "the endpoint's key", notFound: 'MCP endpoint not found.' };

/**
 * Who calls a connection's MCP server, decided before any MCP message is read: no credential, a
 * key that is not the connection's own (an old one after regeneration included) or an invalid
 * token is 401; a user who may not read the project is 404 (as for an unknown server); a
 * connection that is not active is 403.
 */
export async function admitCaller(d: { authenticator: Authenticator; authorizer: Authorizer }, connection: ConnectionRecord, token: string | null, words: GateWords): Promise<Principal> {
  if (!token) throw new AppError('UNAUTHORIZED', `${words.subject} needs Authorization: Bearer <${words.key}> (or a user access token).`);
  if (looksLikeAccessKey(token)) {
    if (!sameHash(hashAccessKey(token), connection.key_hash)) throw new AppError('UNAUTHORIZED', `The key is not ${words.key} (a regenerated key replaces the old one).`);
    requireActive(connection.status, words);
    // The key is this connection's; the app's authentication does not run again after the gate.
    d.authenticator.keyUsed(connection);
    return { kind: 'key', id: connection.id, connection };
  }
  const user = await d.authenticator.authenticate(token);
  if (!user) throw new AppError('UNAUTHORIZED', 'The token is invalid, expired or revoked.');
  try {
    await d.authorizer.requireProject(user, connection.project_id, 'content:read');
  } catch (e) {
    if ((e as DomainError).code === 'NOT_FOUND') throw new DomainError('NOT_FOUND', words.notFound);
    throw e;
  }
  requireActive(connection.status, words);
  return user;
}

/**
 * Who may talk to an endpoint's MCP server: an unknown (or deleted) endpoint is 404, then the
 * caller as `admitCaller` decides; an endpoint whose folder went to the trash is 409. The
 * endpoint's folder is followed to where it is now.
 */
export async function admit(env: McpEnv, authenticator: Authenticator, endpointId: string, token: string | null): Promise<CallContext> {
  const found = await env.endpoints.find(endpointId);
  if (!found) throw new DomainError('NOT_FOUND', endpointWords.notFound);
  let principal = await admitCaller({ authenticator, authorizer: env.authorizer }, found.connection, token, endpointWords);
  const { endpoint, path, node } = await env.endpoints.follow(found);
  // The key's scope follows the folder: the principal carries the connection as it is now.
  if (principal.kind === 'key') principal = { ...principal, connection: endpoint.connection };
  return { env, endpoint, root: path, rootNode: node, principal };
}

function requireActive(status: string, words: GateWords): void {
  if (status !== 'active') throw new DomainError('FORBIDDEN', `${words.subject} is ${status}.`, { status });
}
