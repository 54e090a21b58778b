import type { Authenticator } from '../../auth/authenticator.ts';
import { DomainError } from '../../errors/domainError.ts';
import { admitCaller, type GateWords } from '../gate.ts';
import type { AgentCallContext, AgentMcpEnv } from './context.ts';

const agentWords: GateWords = { subject: "This agent's MCP server", key: "the agent's key", notFound: 'Agent not found.' };

/**
 * Who may talk to an agent's MCP server, decided before any MCP message is read: an unknown (or
 * deleted) agent is 404; then the agent's own key, or a user who may read its project (401, 404,
 * and 403 for a paused agent, as for an endpoint).
 */
export async function admitAgent(env: AgentMcpEnv, authenticator: Authenticator, agentId: string, token: string | null): Promise<AgentCallContext> {
  const agent = await env.agents.find(agentId);
  if (!agent) throw new DomainError('NOT_FOUND', agentWords.notFound);
  const principal = await admitCaller({ authenticator, authorizer: env.authorizer }, agent.connection, token, agentWords);
  return { env, agent, principal };
}
