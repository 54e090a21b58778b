import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../../auth/principal.ts';
import { SecretBox } from '../../auth/secretBox.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../logging/logger.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { defaultForwardLimits, forward, type ForwardLimits } from './forward.ts';
import { ProxyServers } from './proxyServers.ts';
import { ProxyStore } from './proxyStore.ts';

export interface McpProxyService {
  servers: ProxyServers;
  /** Forwards a request of `principal` (project:read, or a key of the project) to the server; the transport's answer streams back. */
  forward(principal: Principal, serverId: string, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
}

/**
 * The MCP proxy (spec 4.9): external MCP servers registered per project, their header values
 * sealed with a key derived from the service's signing secret, reached through the outbound
 * guard. `allowPrivate` is read at each use, so turning it off also stops forwarding.
 */
export function createMcpProxy(d: {
  db: Db;
  signingSecret: Uint8Array;
  authorizer: Authorizer;
  logger: Logger;
  allowPrivate: () => boolean;
  limits?: Partial<ForwardLimits>;
}): McpProxyService {
  const store = new ProxyStore(d.db, new SecretBox(d.signingSecret, 'mcp-proxy-headers'));
  const servers = new ProxyServers({ store, authorizer: d.authorizer, allowPrivate: d.allowPrivate });
  const limits = { ...defaultForwardLimits, ...d.limits };
  return {
    servers,
    async forward(principal, serverId, req, res, body) {
      const server = servers.get(principal, serverId, 'project:read');
      await forward(req, res, body, server, { ...limits, allowPrivate: d.allowPrivate(), logger: d.logger });
    },
  };
}
