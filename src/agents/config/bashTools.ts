import type { Principal } from '../../auth/principal.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import { endpointLimitsSchema, type EndpointLimits } from '../../sandbox/limits.ts';
import { bashNamePattern, DEFAULT_BASH_NAME, type Agent, type AgentBashTool, type Located } from './agentRecord.ts';
import type { Agents } from './agents.ts';
import type { BashToolInput, BashToolStore } from './bashToolStore.ts';
import { checkAll, requireUnique } from './bulk.ts';
import { currentPath, reachableNode, type ReachDeps } from './reachNode.ts';

export interface BashToolRequest {
  /** A folder, or null for the whole project. */
  nodeId: string | null;
  /** Default `bash`. */
  name?: string;
  /** Default read: its commands' changes are not written back. */
  mode?: ConnectionMode;
  limits?: EndpointLimits;
}

export interface BashToolChanges {
  nodeId?: string | null;
  name?: string;
  mode?: ConnectionMode;
  /** Replaces the limits ({} = the defaults). */
  limits?: EndpointLimits;
}

const bashNotFound = () => new DomainError('NOT_FOUND', 'Bash tool not found.');

function checkName(name: string): string {
  if (!bashNamePattern.test(name)) throw invalidField('name', 'must start with a letter and hold only letters, digits, "_" and "-" (at most 64 characters)');
  return name;
}

function checkLimits(limits: EndpointLimits | undefined): EndpointLimits {
  const parsed = endpointLimitsSchema.safeParse(limits ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidField(['limits', ...issue.path].join('.'), issue.message);
  }
  return parsed.data;
}

/**
 * An agent's bash tools (spec 4.8): each a shell over a folder's subtree (or the whole project)
 * run by the sandbox runtime, named uniquely per agent (the name is the tool the model sees).
 * Reading follows the agent; changing needs keys:manage on its project (Agents.manageBy, once the
 * surface has checked the caller sees the project) and a folder the caller reaches.
 */
export class AgentBashTools {
  constructor(private readonly d: ReachDeps & { agents: Pick<Agents, 'find'>; store: BashToolStore }) {}

  /** The agent's bash tools with their folders' current paths, without any check (the chat loop). */
  async located(agentId: string): Promise<Located<AgentBashTool>[]> {
    const agent = await this.d.agents.find(agentId);
    if (!agent) return [];
    return (await this.d.store.list(agentId)).map((b) => this.locate(agent, b));
  }

  /** Adds a bash tool; CONFLICT when the agent has one of that name already (the store decides, whoever races). */
  async add(principal: Principal, agent: Agent, request: BashToolRequest): Promise<Located<AgentBashTool>> {
    const input = await this.check(principal, agent, { ...request, name: request.name ?? DEFAULT_BASH_NAME, mode: request.mode ?? 'read' });
    return this.locate(agent, await this.d.store.insert(agent.connection.id, input));
  }

  async update(principal: Principal, agent: Agent, bashId: string, changes: BashToolChanges): Promise<Located<AgentBashTool>> {
    const current = await this.owned(agent, bashId);
    const input = await this.check(principal, agent, {
      nodeId: changes.nodeId === undefined ? current.node_id : changes.nodeId,
      name: changes.name ?? current.name,
      mode: changes.mode ?? current.mode,
      limits: changes.limits ?? current.limits,
    });
    // Only the fields changed are written: two changes of different fields at once both stay.
    const updated = await this.d.store.update(current, {
      ...(changes.nodeId === undefined ? {} : { node_id: input.node_id }),
      ...(changes.name === undefined ? {} : { name: input.name }),
      ...(changes.mode === undefined ? {} : { mode: input.mode }),
      ...(changes.limits === undefined ? {} : { limits: input.limits }),
    });
    if (!updated) throw bashNotFound();
    return this.locate(agent, updated);
  }

  async remove(principal: Principal, agent: Agent, bashId: string): Promise<AgentBashTool> {
    const current = await this.owned(agent, bashId);
    await this.d.store.delete(current.id);
    return current;
  }

  /** Replaces every bash tool at once: each item is checked first (422 naming its index), then one transaction writes them. */
  async replace(principal: Principal, agent: Agent, requests: BashToolRequest[]): Promise<Located<AgentBashTool>[]> {
    const inputs = await checkAll('bash_tools', requests, (r) => this.check(principal, agent, { ...r, name: r.name ?? DEFAULT_BASH_NAME, mode: r.mode ?? 'read' }));
    requireUnique('bash_tools', 'name', inputs, (i) => i.name);
    return (await this.d.store.replace(agent.connection.id, inputs)).map((b) => this.locate(agent, b));
  }

  private async check(principal: Principal, agent: Agent, r: Required<Omit<BashToolRequest, 'limits'>> & { limits?: EndpointLimits }): Promise<BashToolInput> {
    const name = checkName(r.name);
    const limits = checkLimits(r.limits);
    const node = await reachableNode(this.d, principal, agent.connection.project_id, r.nodeId, 'a bash tool is bound to a folder (or null for the whole project)');
    return { node_id: node?.id ?? null, name, mode: r.mode, limits };
  }

  private async owned(agent: Agent, bashId: string): Promise<AgentBashTool> {
    const tool = await this.d.store.find(bashId);
    if (!tool || tool.agent_id !== agent.connection.id) throw bashNotFound();
    return tool;
  }

  private locate(agent: Agent, b: AgentBashTool): Located<AgentBashTool> {
    return { ...b, path: currentPath(this.d, agent.connection.project_id, b.node_id) };
  }
}
