import type { IncomingMessage, ServerResponse } from 'node:http';
import { SecretBox } from '../../auth/secretBox.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { Logger } from '../../logging/logger.ts';
import { defaultForwardLimits, forward, type ForwardLimits } from './forward.ts';
import { ProxyServers } from './proxyServers.ts';
import { ProxyStore, type ProxyServer } from './proxyStore.ts';

export interface McpProxyService {
  servers: ProxyServers;
  /** Forwards a request to the server (the surface checked project:read, or a key of the project); the transport's answer streams back. */
  forward(server: ProxyServer, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
}

/**
 * The MCP proxy (spec 4.9): external MCP servers registered per project, their header values
 * sealed with a key derived from the service's signing secret, reached through the outbound
 * guard. `allowPrivate` is read at each use, so turning it off also stops forwarding.
 */
export function createMcpProxy(d: {
  metadata: MetadataStore;
  signingSecret: Uint8Array;
  logger: Logger;
  allowPrivate: () => boolean;
  limits?: Partial<ForwardLimits>;
}): McpProxyService {
  const store = new ProxyStore(d.metadata, new SecretBox(d.signingSecret, 'mcp-proxy-headers'));
  const servers = new ProxyServers({ store, allowPrivate: d.allowPrivate });
  const limits = { ...defaultForwardLimits, ...d.limits };
  return {
    servers,
    async forward(server, req, res, body) {
      await forward(req, res, body, server, { ...limits, allowPrivate: d.allowPrivate(), logger: d.logger });
    },
  };
}
