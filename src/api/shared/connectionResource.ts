import { agentVisibleTo } from '../../agents/config/agents.ts';
import type { Agent } from '../../agents/config/agentRecord.ts';
import type { Principal } from '../../auth/principal.ts';

/**
 * A record kept on a connection (an agent, an MCP or sandbox endpoint) as a `resource` check
 * takes it: the record itself, with its connection's project beside it (null stays null: "not found").
 */
export async function onConnection<T extends { connection: { project_id: string } }>(found: T | null | Promise<T | null>): Promise<(T & { project_id: string }) | null> {
  const record = await found;
  return record && { ...record, project_id: record.connection.project_id };
}

/** An agent as a `resource` check takes it: hidden (null, "Agent not found.") from any key but its own. */
export async function visibleAgent(principal: Principal, found: Agent | null | Promise<Agent | null>): Promise<(Agent & { project_id: string }) | null> {
  const agent = await found;
  return agent && agentVisibleTo(principal, agent) ? onConnection(agent) : null;
}
