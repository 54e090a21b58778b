import type { Agent } from '../../agents/config/agentRecord.ts';
import type { Agents } from '../../agents/config/agents.ts';
import type { AgentToolBindings } from '../../agents/bindings/toolBindings.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { Tools } from '../../tools/tools.ts';

/** What an agent's MCP server reaches: the agent, its bound tools, and the tools library that runs them. */
export interface AgentMcpEnv {
  agents: Agents;
  bindings: AgentToolBindings;
  tools: Tools;
  authorizer: Authorizer;
}

/**
 * One request to an agent's MCP server as the gate resolved it: the agent as it is now, and who
 * calls (the agent's own key, or a user who may read its project). Bound tools run as the agent.
 */
export interface AgentCallContext {
  env: AgentMcpEnv;
  agent: Agent;
  principal: Principal;
}

/**
 * Writing tools are offered to the agent's own key (binding a tool is the grant) and to users who
 * may write the project; a reader reaches the agent's reading tools only.
 */
export async function mayWrite(c: AgentCallContext): Promise<boolean> {
  if (c.principal.kind === 'key') return c.principal.connection.id === c.agent.connection.id;
  try {
    await c.env.authorizer.requireProject(c.principal, c.agent.connection.project_id, 'content:write');
    return true;
  } catch {
    return false;
  }
}
