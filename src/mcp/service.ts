import type { IncomingMessage, ServerResponse } from 'node:http';
import { toAgent, type Agent } from '../agents/config/agentRecord.ts';
import type { Agents } from '../agents/config/agents.ts';
import type { AgentToolBindings } from '../agents/bindings/toolBindings.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import type { ContentStore } from '../content/contentStore.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Authorizer } from '../policies/authorize.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import type { Changelog } from '../events/changelog.ts';
import type { Tools } from '../tools/tools.ts';
import type { AgentCallContext, AgentMcpEnv } from './agents/context.ts';
import { admitAgent } from './agents/gate.ts';
import type { CallContext, McpEnv } from './context.ts';
import { McpEndpoints } from './endpoints.ts';
import { admit } from './gate.ts';
import { defaultSessionLimits, McpSessions, type SessionLimits } from './sessions.ts';

/** The servers (the SDK's `Server`, its schemas, Ajv) are imported by the first session: most processes never open one. */
let servers: Promise<[typeof import('./server.ts'), typeof import('./agents/server.ts')]> | undefined;
const loadServers = () => (servers ??= Promise.all([import('./server.ts'), import('./agents/server.ts')]));

/** A request admitted to one of the MCP servers: an endpoint's or an agent's. */
export type McpContext = CallContext | AgentCallContext;

const isAgentContext = (c: McpContext): c is AgentCallContext => 'agent' in c;

export interface McpService {
  endpoints: McpEndpoints;
  /** Tools bound to agents, served on each agent's MCP server (and offered in its chat). */
  agentTools: AgentToolBindings;
  sessions: McpSessions<McpContext>;
  /** The endpoint server's gate: the request's context, or the HTTP error that refuses it (404, 401, 403, 409). */
  admit(endpointId: string, token: string | null): Promise<CallContext>;
  /** The agent server's gate (404, 401, 403). */
  admitAgent(agentId: string, token: string | null): Promise<AgentCallContext>;
  /** Answers an admitted request (the transport writes the response). */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, c: McpContext): Promise<void>;
  /** A new key for an agent (keys:manage): the old key, and the MCP sessions opened with it, stop at once. */
  regenerateAgentKey(agent: Agent): Promise<{ agent: Agent; key: string }>;
  close(): void;
}

/** MCP endpoints and agents' MCP servers (spec 4.9): their records, the gates, and the sessions of their Streamable HTTP servers. */
export function createMcp(d: {
  logger: Logger;
  version: string;
  content: ContentStore;
  connections: AccessConnectionStore;
  access: ContentAccess;
  authorizer: Authorizer;
  authenticator: Authenticator;
  tools: Tools;
  changelog: Changelog;
  agents: Agents;
  agentTools: AgentToolBindings;
  sessions?: Partial<SessionLimits>;
}): McpService {
  const endpoints = new McpEndpoints({ connections: d.connections, content: d.content, access: d.access, tools: d.tools });
  const env: McpEnv = { content: d.content, access: d.access, authorizer: d.authorizer, tools: d.tools, changelog: d.changelog, endpoints };
  const agentEnv: AgentMcpEnv = { agents: d.agents, bindings: d.agentTools, tools: d.tools, authorizer: d.authorizer };
  const options = { version: d.version, logger: d.logger };
  const sessions = new McpSessions<McpContext>(
    async (first) => {
      const [{ endpointServer }, { agentServer }] = await loadServers();
      return isAgentContext(first) ? agentServer(first, options) : endpointServer(first, options);
    },
    (c) => ({ serverId: isAgentContext(c) ? c.agent.connection.id : c.endpoint.connection.id, principal: c.principal }),
    d.logger,
    { ...defaultSessionLimits, ...d.sessions },
  );
  endpoints.onAccessEnded = (event) => sessions.endAccess(event);
  d.agents.onAccessEnded = (agentId) => sessions.endAccess({ serverId: agentId, holders: 'all' });
  return {
    endpoints,
    agentTools: d.agentTools,
    sessions,
    admit: (endpointId, token) => admit(env, d.authenticator, endpointId, token),
    admitAgent: (agentId, token) => admitAgent(agentEnv, d.authenticator, agentId, token),
    handle: (req, res, body, c) => sessions.handle(req, res, body, c),
    async regenerateAgentKey(agent) {
      const { connection, key } = await d.connections.regenerateKey(agent.connection.id);
      sessions.endAccess({ serverId: connection.id, holders: 'key' });
      return { agent: toAgent(connection), key };
    },
    close: () => sessions.close(),
  };
}
