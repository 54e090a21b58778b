import type { Principal } from '../../auth/principal.ts';
import { lockKey } from '../../db/metadata/keyLock.ts';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { ConnectionStatus } from '../../domain/connections/connectionRecord.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import { defined } from '../../domain/defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { AccessStore } from './accessStore.ts';
import { agentConfig, agentSettingsOf, DEFAULT_MAX_TOOL_CALLS_PER_ROUND, DEFAULT_MAX_TOOL_ROUNDS, toAgent, type Agent } from './agentRecord.ts';
import { DEFAULT_AGENT_NAME, defaultAgentAccess, defaultAgentSettings } from './defaultAgent.ts';
import { checkSettings } from './settingsRules.ts';

export interface AgentsDeps {
  metadata: MetadataStore;
  connections: AccessConnectionStore;
  accesses: AccessStore;
  authorizer: Authorizer;
  /** `provider:model` of agents created without one (CNS_DEFAULT_MODEL); bare model names of no known family take its provider. */
  defaultModel: string;
}

export interface NewAgent {
  projectId: string;
  name: string;
  systemPrompt: string;
  model?: string;
  description?: string;
  temperature?: number | null;
  maxToolRounds?: number;
  maxToolCallsPerRound?: number;
}

export interface AgentChanges {
  name?: string;
  systemPrompt?: string;
  model?: string;
  description?: string;
  /** null: back to the provider's default. */
  temperature?: number | null;
  maxToolRounds?: number;
  maxToolCallsPerRound?: number;
  /** Paused: its key stops authenticating until it is active again. */
  status?: Extract<ConnectionStatus, 'active' | 'paused'>;
}

export const agentNotFound = () => new DomainError('NOT_FOUND', 'Agent not found.');

/**
 * Agents (spec 4.8): connections of kind `agent` whose settings live in the connection's
 * config. Reading one needs content:read on its project, or being it (its own key); changing
 * one needs keys:manage, like every other key. An agent the caller cannot see is "not found".
 * Surfaces that have checked the caller sees the project (the REST routes declare project:read)
 * call the methods taking an agent; what stays here is the finer part: a key reads only itself,
 * and changing needs keys:manage after that (other keys are told the agent does not exist).
 */
export class Agents {

  constructor(private readonly d: AgentsDeps) {}

  /** Default agents being made by this process, by project. */
  private readonly makingDefault = new Map<string, Promise<Agent>>();

  /** Told when an agent is paused or deleted: surfaces holding its sessions (its MCP server) end them. */
  onAccessEnded: ((agentId: string) => void) | null = null;

  /** An agent by id, without any check (the chat loop, after it has authorized the caller). */
  async find(id: string, db?: MetadataDb): Promise<Agent | null> {
    const c = await this.d.connections.find(id, db);
    return c && c.kind === 'agent' ? toAgent(c) : null;
  }

  /** May this principal read (and chat with) the agent: content:read on its project, or its own key (the whole check, for an agent named where no route checked it). */
  async readable(principal: Principal, id: string): Promise<Agent> {
    const agent = await this.find(id);
    if (!agent) throw agentNotFound();
    if (principal.kind === 'user') {
      try {
        await this.d.authorizer.requireProject(principal, agent.connection.project_id, 'content:read');
      } catch (e) {
        if ((e as DomainError).code === 'NOT_FOUND') throw agentNotFound();
        throw e;
      }
    }
    if (!agentVisibleTo(principal, agent)) throw agentNotFound();
    return agent;
  }

  /** A project's agents (the caller may read the project); an agent's key lists only itself. */
  async list(principal: Principal, projectId: string, page: Page): Promise<Paged<Agent>> {
    if (principal.kind === 'key') {
      const own = principal.connection.kind === 'agent' ? await this.find(principal.connection.id) : null;
      if (!own) throw new DomainError('FORBIDDEN', 'Only an agent key reads agents (its own).');
      return { items: page.offset === 0 ? [own] : [], total: 1 };
    }
    const { items, total } = await this.d.connections.listByProject(projectId, { kind: 'agent' }, page);
    return { items: items.map(toAgent), total };
  }

  /** Creates an agent and its key (shown once), made by `principal` (who manages the project's keys). It reaches nothing until it is given accesses. */
  async create(principal: Principal, input: NewAgent): Promise<{ agent: Agent; key: string }> {
    const settings = checkSettings(
      {
        system_prompt: input.systemPrompt,
        model: input.model ?? this.d.defaultModel,
        description: input.description ?? '',
        temperature: input.temperature ?? null,
        max_tool_rounds: input.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS,
        max_tool_calls_per_round: input.maxToolCallsPerRound ?? DEFAULT_MAX_TOOL_CALLS_PER_ROUND,
      },
      this.d.defaultModel,
    );
    const { connection, key } = await this.d.connections.createConnection({
      projectId: input.projectId,
      kind: 'agent',
      name: input.name,
      scopePath: '',
      mode: 'read_write',
      createdBy: principal.kind === 'user' ? principal.id : null,
      config: agentConfig(settings, false),
    });
    return { agent: toAgent(connection), key };
  }

  /** Changes an agent (the route checked keys:manage on its project). */
  async update(agent: Agent, changes: AgentChanges): Promise<Agent> {
    const id = agent.connection.id;
    const changed = defined({
      system_prompt: changes.systemPrompt,
      model: changes.model,
      description: changes.description,
      temperature: changes.temperature,
      max_tool_rounds: changes.maxToolRounds,
      max_tool_calls_per_round: changes.maxToolCallsPerRound,
    });
    // Merged into the settings as stored when written (not as read by the caller): a change of
    // another setting made meanwhile stays. A change of no setting leaves the config alone.
    const config =
      Object.keys(changed).length === 0
        ? undefined
        : (stored: Record<string, unknown>) => agentConfig(checkSettings({ ...agentSettingsOf(stored), ...changed }, this.d.defaultModel), stored.is_default === true);
    const connection = await this.d.connections.update(id, { name: changes.name, status: changes.status, config });
    if (connection.status !== 'active' && agent.connection.status === 'active') this.onAccessEnded?.(id);
    return toAgent(connection);
  }

  /** Deletes the agent's connection: its key, accesses, bash tools, sessions and executions go with it. */
  async delete(agent: Agent): Promise<Agent> {
    await this.d.connections.delete(agent.connection.id);
    this.onAccessEnded?.(agent.connection.id);
    return agent;
  }

  /**
   * The project's default agent, created on first use by anyone who may read the project: the
   * default prompt and model, and one access to the whole project (read_write). The agent and its
   * access are made in one metadata transaction under a lock per project, and the store's unique
   * marker allows one per project, so callers racing to create it all get the same agent, with
   * its access. Its own key may read it; other keys may not.
   */
  async defaultFor(principal: Principal, projectId: string): Promise<Agent> {
    if (principal.kind === 'key') {
      const existing = await this.findDefault(projectId);
      if (!existing || existing.connection.id !== principal.connection.id) throw agentNotFound();
      return existing;
    }
    // Callers of this process arriving while it is being made wait for it.
    const pending = this.makingDefault.get(projectId);
    if (pending) return pending;
    const making = (async () => {
      const existing = await this.findDefault(projectId);
      if (existing) return existing;
      return this.d.metadata.transaction(async (trx) => {
        await lockKey(this.d.metadata.engine, trx, `default-agent:${projectId}`);
        const again = await this.findDefault(projectId, trx);
        if (again) return again;
        const { connection } = await this.d.connections.createConnection(
          {
            projectId,
            kind: 'agent',
            name: DEFAULT_AGENT_NAME,
            scopePath: '',
            mode: 'read_write',
            createdBy: principal.id,
            config: agentConfig(defaultAgentSettings(this.d.defaultModel), true),
          },
          trx,
        );
        await this.d.accesses.insertIn(trx, connection.id, defaultAgentAccess);
        return toAgent(connection);
      });
    })().finally(() => this.makingDefault.delete(projectId));
    this.makingDefault.set(projectId, making);
    return making;
  }

  /** The project's agents are few: their configs are read here rather than searched by a JSON function of one engine. */
  private async findDefault(projectId: string, db: MetadataDb = this.d.metadata.db): Promise<Agent | null> {
    const agents = await db.selectFrom('connections').selectAll().where('project_id', '=', projectId).where('kind', '=', 'agent').execute();
    const found = agents.map(toAgent).find((a) => a.isDefault);
    return found ?? null;
  }
}

/**
 * Whether a caller who sees the agent's project sees the agent itself: users do; a key sees only
 * the agent it is (any other key is told the agent does not exist, even before keys:manage is
 * asked, so that a key learns nothing of the project's other agents).
 */
export function agentVisibleTo(principal: Principal, agent: Agent): boolean {
  return principal.kind !== 'key' || principal.connection.id === agent.connection.id;
}
