import type { Principal } from '../../auth/principal.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import { toolTypes } from '../../tools/registry.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';
import type { Tools } from '../../tools/tools.ts';
import type { Agent } from '../config/agentRecord.ts';
import type { Agents } from '../config/agents.ts';
import { currentPath, reachableNode, type ReachDeps } from '../config/reachNode.ts';
import { BindingStore, type ToolBinding } from './bindingStore.ts';
import { ToolCallLog, type CallFigures, type CallSurface } from './callLog.ts';

export type { ToolBinding } from './bindingStore.ts';
export type { CallSurface } from './callLog.ts';

/** A tool as the agent offers it: the binding, the tool, the name and description it goes by, its node's path now. */
export interface BoundTool {
  binding: ToolBinding;
  tool: ToolRecord;
  name: string;
  description: string;
  /** The tool's node where it is now ('' for a tool on the whole project); null once the node is gone (the tool cannot run). */
  nodePath: string | null;
}

export interface BindRequest {
  toolId: string;
  /** Default: the tool's name. */
  name?: string;
  /** Default: the tool's description. */
  description?: string;
}

/** undefined: unchanged; null: back to the tool's own. */
export interface BindingChanges {
  name?: string | null;
  description?: string | null;
}

export interface AgentToolStatus extends CallFigures {
  agent_id: string;
  active: boolean;
  tool_count: number;
}

/** A tool name LLM providers and MCP clients accept. */
export const bindingNamePattern = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

const bindingNotFound = () => new DomainError('NOT_FOUND', 'This tool is not bound to the agent.');
const toolNotFound = () => new DomainError('NOT_FOUND', 'Tool not found.');

/** A tool's own name as a binding name (a tool's name is free text). */
function defaultName(tool: ToolRecord): string {
  if (bindingNamePattern.test(tool.name)) return tool.name;
  const cleaned = tool.name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^[^A-Za-z]+/, '').replace(/_+$/, '').slice(0, 60);
  return cleaned || tool.type;
}

const offeredName = (b: Pick<ToolBinding, 'name'>, tool: ToolRecord) => b.name ?? defaultName(tool);
const offeredDescription = (b: ToolBinding, tool: ToolRecord) => b.description ?? (tool.description || toolTypes.get(tool.type)?.summary || tool.type);

/** `name` must not be one the agent already offers (`offered`) for another tool. */
function requireFreeName(offered: BoundTool[], name: string, toolId: string): void {
  const holder = offered.find((b) => b.name === name && b.tool.id !== toolId);
  if (holder) {
    throw new DomainError('CONFLICT', `The agent already offers a tool named "${name}" (tool ${holder.tool.id}): give this binding another name.`, { name, tool_id: holder.tool.id });
  }
}

function checkName(name: string | null | undefined): void {
  if (typeof name === 'string' && !bindingNamePattern.test(name)) {
    throw invalidField('name', 'must start with a letter and hold only letters, digits, "_" and "-" (at most 64 characters)');
  }
}

/**
 * The project's tools bound to an agent (spec 4.9): each is offered to the agent's MCP clients
 * (and its chat) under a name unique to the agent, and runs over its own node as the agent.
 * Binding a tool is the grant: reading the bindings follows the agent (Agents.readBy), changing
 * them needs keys:manage (Agents.manageBy), both once the surface has checked the caller sees the
 * project; and the caller must reach the tool's node.
 */
export class AgentToolBindings {
  private readonly store: BindingStore;
  private readonly calls: ToolCallLog;

  constructor(private readonly d: ReachDeps & { metadata: MetadataStore; agents: Pick<Agents, 'find'>; tools: Pick<Tools, 'find' | 'findMany' | 'visible'>; now?: () => number }) {
    this.store = new BindingStore(d.metadata);
    this.calls = new ToolCallLog(d.metadata, d.now);
  }

  /** The agent's bound tools for a caller who sees its project: a key reads only its own agent's. */
  list(principal: Principal, agent: Agent): Promise<BoundTool[]> {
    return this.boundTools(agent.connection.id);
  }

  /** Binds a tool (keys:manage): one of the agent's project, that the caller sees and reaches. */
  async bind(principal: Principal, agent: Agent, request: BindRequest): Promise<BoundTool> {
    const tool = await this.reachableTool(principal, agent, request.toolId);
    checkName(request.name);
    // A bind racing this one past these checks is refused by the store's unique indexes (409 too).
    const offered = await this.boundTools(agent.connection.id);
    if (await this.store.find(agent.connection.id, tool.id)) throw new DomainError('CONFLICT', 'This tool is already bound to the agent (change the binding with PUT).', { tool_id: tool.id });
    const fields = { name: request.name ?? null, description: request.description ?? null };
    requireFreeName(offered, offeredName(fields, tool), tool.id);
    return this.bound(agent, await this.store.insert(agent.connection.id, tool.id, fields), tool);
  }

  async update(principal: Principal, agent: Agent, toolId: string, changes: BindingChanges): Promise<BoundTool> {
    const [tool, offered, binding] = await Promise.all([this.d.tools.find(toolId), this.boundTools(agent.connection.id), this.store.find(agent.connection.id, toolId)]);
    if (!binding || !tool) throw bindingNotFound();
    checkName(changes.name);
    requireFreeName(offered, offeredName({ name: changes.name === undefined ? binding.name : changes.name }, tool), tool.id);
    // Only the fields changed: a new name and a new description at once both stay.
    const updated = await this.store.update(binding, { name: changes.name, description: changes.description });
    if (!updated) throw bindingNotFound();
    return this.bound(agent, updated, tool);
  }

  async unbind(principal: Principal, agent: Agent, toolId: string): Promise<ToolBinding> {
    const binding = await this.store.find(agent.connection.id, toolId);
    if (!binding) throw bindingNotFound();
    await this.store.delete(binding.id);
    return binding;
  }

  /**
   * The agent's bound tools as offered now, in the order they were bound, without any check (the
   * agent's MCP server and chat, after they have admitted the caller). Names are unique: should a
   * tool's rename make its default name collide, the later binding's name takes a suffix.
   */
  async boundTools(agentId: string): Promise<BoundTool[]> {
    const agent = await this.d.agents.find(agentId);
    if (!agent) return [];
    const bindings = await this.store.list(agentId);
    const tools = await this.d.tools.findMany(bindings.map((b) => b.tool_id));
    const taken = new Set<string>();
    const out: BoundTool[] = [];
    for (const binding of bindings) {
      const tool = tools.get(binding.tool_id);
      if (!tool) continue;
      const base = offeredName(binding, tool);
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
      taken.add(name);
      out.push({ ...this.bound(agent, binding, tool), name });
    }
    return out;
  }

  /** Records one call of a bound tool (for the status figures); never throws for a deleted agent. */
  async recordCall(agentId: string, name: string, ok: boolean, durationMs: number, surface: CallSurface): Promise<void> {
    if (!(await this.d.agents.find(agentId))) return;
    await this.calls.record(agentId, name, ok, durationMs, surface);
  }

  /** The agent's MCP status for a caller who sees its project: a key reads only its own agent's. */
  async status(principal: Principal, agent: Agent): Promise<AgentToolStatus> {
    const id = agent.connection.id;
    const [toolCount, figures] = await Promise.all([this.store.count(id), this.calls.figures(id)]);
    return { agent_id: id, active: agent.connection.status === 'active', tool_count: toolCount, ...figures };
  }

  /** A tool of the agent's project the caller sees, on a node the caller reaches: 404 otherwise. */
  private async reachableTool(principal: Principal, agent: Agent, toolId: string): Promise<ToolRecord> {
    const tool = await this.d.tools.visible(principal, toolId);
    if (tool.project_id !== agent.connection.project_id) throw toolNotFound();
    await reachableNode(this.d, principal, tool.project_id, tool.node_id, null);
    return tool;
  }

  private bound(agent: Agent, binding: ToolBinding, tool: ToolRecord): BoundTool {
    return { binding, tool, name: offeredName(binding, tool), description: offeredDescription(binding, tool), nodePath: currentPath(this.d, agent.connection.project_id, tool.node_id) };
  }
}
