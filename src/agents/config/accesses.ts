import type { Principal } from '../../auth/principal.ts';
import type { ConnectionMode } from '../../domain/connections/connectionRecord.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { AccessInput, AccessStore } from './accessStore.ts';
import { accessToolNames, defaultAccessTools, type AccessToolName, type Agent, type AgentAccess, type Located } from './agentRecord.ts';
import type { Agents } from './agents.ts';
import { checkAll, requireUnique } from './bulk.ts';
import { currentPath, reachableNode, type ReachDeps } from './reachNode.ts';

export interface AccessRequest {
  /** null: the whole project. */
  nodeId: string | null;
  mode: ConnectionMode;
  /** Omitted: the mode's defaults. */
  tools?: AccessToolName[];
}

export interface AccessChanges {
  nodeId?: string | null;
  mode?: ConnectionMode;
  tools?: AccessToolName[];
}

const accessNotFound = () => new DomainError('NOT_FOUND', 'Access not found.');
const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** The tools in their canonical order, each once; `write` needs a read_write access. */
function checkTools(mode: ConnectionMode, tools: readonly AccessToolName[] | undefined): AccessToolName[] {
  if (tools === undefined) return [...defaultAccessTools[mode]];
  for (const t of tools) if (!accessToolNames.includes(t)) throw invalidField('tools', `unknown tool "${t}"; one of ${accessToolNames.join(', ')}`);
  if (tools.length === 0) throw invalidField('tools', 'must name at least one tool (omit it for the defaults)');
  if (mode === 'read' && tools.includes('write')) throw invalidField('tools', '"write" needs mode read_write');
  return accessToolNames.filter((t) => tools.includes(t));
}

/**
 * What an agent may reach (spec 4.8): one access per node (or the whole project), each with a
 * mode and the tools it offers there. Reading them follows the agent; changing them needs
 * keys:manage on its project (Agents.manageBy, once the surface has checked the caller sees the
 * project), and the caller must reach the node they hand over.
 */
export class AgentAccesses {
  constructor(private readonly d: ReachDeps & { agents: Pick<Agents, 'find'>; store: AccessStore }) {}

  /** The agent's accesses with their nodes' current paths, without any check (the chat loop). */
  async located(agentId: string): Promise<Located<AgentAccess>[]> {
    const agent = await this.d.agents.find(agentId);
    if (!agent) return [];
    return (await this.d.store.list(agentId)).map((a) => this.locate(agent, a));
  }

  /** Adds an access; CONFLICT when the agent has one to that node already (the store decides, whoever races). */
  async add(principal: Principal, agent: Agent, request: AccessRequest): Promise<Located<AgentAccess>> {
    const input = await this.check(principal, agent, request.nodeId, request.mode, request.tools);
    return this.locate(agent, await this.d.store.insert(agent.connection.id, input));
  }

  /**
   * Changes an access. A new mode without tools keeps tools that were chosen by hand (422 when
   * they include `write` and the mode becomes read) and moves default ones to the new mode's.
   */
  async update(principal: Principal, agent: Agent, accessId: string, changes: AccessChanges): Promise<Located<AgentAccess>> {
    const current = await this.owned(agent, accessId);
    const nodeId = changes.nodeId === undefined ? current.node_id : changes.nodeId;
    const input = await this.check(principal, agent, nodeId, changes.mode ?? current.mode, nextTools(current, changes));
    // Only what the change names is written; mode and tools (which depend on each other) are
    // worked out again from the access as stored, under the store's lock: a change of another
    // field made meanwhile stays, and the pair stays valid.
    const modeAndTools =
      changes.mode === undefined && changes.tools === undefined
        ? undefined
        : (stored: AgentAccess) => {
            const mode = changes.mode ?? stored.mode;
            return { mode, tools: checkTools(mode, nextTools(stored, changes)) };
          };
    const updated = await this.d.store.update(current, { ...(changes.nodeId === undefined ? {} : { node_id: input.node_id }), modeAndTools });
    return this.locate(agent, updated ?? throwing(accessNotFound()));
  }

  async remove(principal: Principal, agent: Agent, accessId: string): Promise<AgentAccess> {
    const current = await this.owned(agent, accessId);
    await this.d.store.delete(current.id);
    return current;
  }

  /** Replaces every access at once: each item is checked first (422 naming its index), then one transaction writes them. */
  async replace(principal: Principal, agent: Agent, requests: AccessRequest[]): Promise<Located<AgentAccess>[]> {
    const inputs = await checkAll('accesses', requests, (r) => this.check(principal, agent, r.nodeId, r.mode, r.tools));
    requireUnique('accesses', 'node_id', inputs, (i) => i.node_id ?? '');
    return (await this.d.store.replace(agent.connection.id, inputs)).map((a) => this.locate(agent, a));
  }

  private async check(principal: Principal, agent: Agent, nodeId: string | null, mode: ConnectionMode, tools: readonly AccessToolName[] | undefined): Promise<AccessInput> {
    const checkedTools = checkTools(mode, tools);
    const node = await reachableNode(this.d, principal, agent.connection.project_id, nodeId, null);
    return { node_id: node?.id ?? null, mode, tools: checkedTools };
  }

  private async owned(agent: Agent, accessId: string): Promise<AgentAccess> {
    const access = await this.d.store.find(accessId);
    if (!access || access.agent_id !== agent.connection.id) throw accessNotFound();
    return access;
  }

  private locate(agent: Agent, a: AgentAccess): Located<AgentAccess> {
    return { ...a, path: currentPath(this.d, agent.connection.project_id, a.node_id) };
  }
}

/** The tools an access gets: a new mode without tools keeps tools chosen by hand and moves default ones to the new mode's (undefined). */
function nextTools(current: AgentAccess, changes: AccessChanges): readonly AccessToolName[] | undefined {
  const mode = changes.mode ?? current.mode;
  const chosenByHand = !sameSet(current.tools, defaultAccessTools[current.mode]);
  return changes.tools ?? (mode === current.mode || chosenByHand ? current.tools : undefined);
}

function throwing(e: Error): never {
  throw e;
}
