import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ContentStore } from '../content/contentStore.ts';
import type { ConnectionStore } from '../domain/connections/connectionStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import type { Changelog } from '../sync/changelog.ts';
import type { Tools } from '../tools/tools.ts';
import type { CallContext, McpEnv } from './context.ts';
import { McpEndpoints } from './endpoints.ts';
import { admit } from './gate.ts';
import { endpointServer } from './server.ts';
import { defaultSessionLimits, McpSessions, type SessionLimits } from './sessions.ts';

export interface McpService {
  endpoints: McpEndpoints;
  sessions: McpSessions;
  /** The gate: the request's context, or the HTTP error that refuses it (404, 401, 403, 409). */
  admit(endpointId: string, token: string | null): Promise<CallContext>;
  /** Answers an admitted request (the transport writes the response). */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, c: CallContext): Promise<void>;
  close(): void;
}

/** MCP endpoints (spec 4.9): their records, the gate, and the sessions of their Streamable HTTP servers. */
export function createMcp(d: {
  logger: Logger;
  version: string;
  content: ContentStore;
  connections: ConnectionStore;
  access: ContentAccess;
  authorizer: Authorizer;
  authenticator: Authenticator;
  tools: Tools;
  changelog: Changelog;
  sessions?: Partial<SessionLimits>;
}): McpService {
  const endpoints = new McpEndpoints({ connections: d.connections, content: d.content, access: d.access, authorizer: d.authorizer, tools: d.tools });
  const env: McpEnv = { content: d.content, access: d.access, authorizer: d.authorizer, tools: d.tools, changelog: d.changelog, endpoints };
  const sessions = new McpSessions((first) => endpointServer(first, { version: d.version, logger: d.logger }), d.logger, { ...defaultSessionLimits, ...d.sessions });
  endpoints.onAccessEnded = (event) => sessions.endAccess(event);
  return {
    endpoints,
    sessions,
    admit: (endpointId, token) => admit(env, d.authenticator, endpointId, token),
    handle: (req, res, body, c) => sessions.handle(req, res, body, c),
    close: () => sessions.close(),
  };
}
