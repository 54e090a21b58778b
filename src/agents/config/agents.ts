import type { Principal } from '../../auth/principal.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import type { ConnectionStatus } from '../../domain/connections/connectionRecord.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import { defined } from '../../domain/defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { AccessStore } from './accessStore.ts';
import { agentConfig, DEFAULT_MAX_TOOL_CALLS_PER_ROUND, DEFAULT_MAX_TOOL_ROUNDS, toAgent, type Agent, type AgentSettings } from './agentRecord.ts';
import { DEFAULT_AGENT_NAME, defaultAgentAccess, defaultAgentSettings } from './defaultAgent.ts';
import { checkSettings } from './settingsRules.ts';

export interface AgentsDeps {
  db: Db;
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
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly d: AgentsDeps) {
    this.sql = statementCache(d.db);
  }

  /** Default agents being made by this process, by project. */
  private readonly makingDefault = new Map<string, Promise<Agent>>();

  /** Told when an agent is paused or deleted: surfaces holding its sessions (its MCP server) end them. */
  onAccessEnded: ((agentId: string) => void) | null = null;

  /** An agent by id, without any check (the chat loop, after it has authorized the caller). */
  find(id: string): Agent | null {
    const c = this.d.connections.find(id);
    return c && c.kind === 'agent' ? toAgent(c) : null;
  }

  /** May this principal read (and chat with) the agent: content:read on its project, or its own key (the whole check, for an agent named where no route checked it). */
  async readable(principal: Principal, id: string): Promise<Agent> {
    const agent = this.find(id);
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
  list(principal: Principal, projectId: string, page: Page): Paged<Agent> {
    if (principal.kind === 'key') {
      const own = principal.connection.kind === 'agent' ? this.find(principal.connection.id) : null;
      if (!own) throw new DomainError('FORBIDDEN', 'Only an agent key reads agents (its own).');
      return { items: page.offset === 0 ? [own] : [], total: 1 };
    }
    const { items, total } = this.d.connections.listByProject(projectId, { kind: 'agent' }, page);
    return { items: items.map(toAgent), total };
  }

  /** Creates an agent and its key (shown once), made by `principal` (who manages the project's keys). It reaches nothing until it is given accesses. */
  create(principal: Principal, input: NewAgent): { agent: Agent; key: string } {
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
    const { connection, key } = this.d.connections.createConnection({
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
  update(agent: Agent, changes: AgentChanges): Agent {
    const id = agent.connection.id;
    const settings: AgentSettings = checkSettings(
      {
        ...agent.settings,
        ...defined({
          system_prompt: changes.systemPrompt,
          model: changes.model,
          description: changes.description,
          temperature: changes.temperature,
          max_tool_rounds: changes.maxToolRounds,
          max_tool_calls_per_round: changes.maxToolCallsPerRound,
        }),
      },
      this.d.defaultModel,
    );
    const connection = this.d.connections.update(id, { name: changes.name, status: changes.status, config: agentConfig(settings, agent.isDefault) });
    if (connection.status !== 'active' && agent.connection.status === 'active') this.onAccessEnded?.(id);
    return toAgent(connection);
  }

  /** Deletes the agent's connection: its key, accesses, bash tools, sessions and executions go with it. */
  delete(agent: Agent): Agent {
    this.d.connections.delete(agent.connection.id);
    this.onAccessEnded?.(agent.connection.id);
    return agent;
  }

  /**
   * The project's default agent, created on first use by anyone who may read the project: the
   * default prompt and model, and one access to the whole project (read_write). The agent is
   * created in one write transaction, and the store's unique marker allows one per project, so
   * callers racing to create it all get the same agent. Its access is on the metadata store,
   * written by the one caller that created the agent, just after (a crash between leaves the
   * default agent without access: it reaches nothing until it is given one; another process may
   * answer it in between without its access). Its own key may read it; other keys may not.
   */
  async defaultFor(principal: Principal, projectId: string): Promise<Agent> {
    if (principal.kind === 'key') {
      const existing = this.findDefault(projectId);
      if (!existing || existing.connection.id !== principal.connection.id) throw agentNotFound();
      return existing;
    }
    // Callers of this process arriving while it is being made wait for its access too.
    const pending = this.makingDefault.get(projectId);
    if (pending) return pending;
    const existing = this.findDefault(projectId);
    if (existing) return existing;
    const making = (async () => {
      const made = inTransaction(this.d.db, () => {
        const again = this.findDefault(projectId);
        if (again) return { agent: again, created: false };
        const { connection } = this.d.connections.createConnection({
          projectId,
          kind: 'agent',
          name: DEFAULT_AGENT_NAME,
          scopePath: '',
          mode: 'read_write',
          createdBy: principal.id,
          config: agentConfig(defaultAgentSettings(this.d.defaultModel), true),
        });
        return { agent: toAgent(connection), created: true };
      });
      if (made.created) await this.d.accesses.insert(made.agent.connection.id, defaultAgentAccess);
      return made.agent;
    })().finally(() => this.makingDefault.delete(projectId));
    this.makingDefault.set(projectId, making);
    return making;
  }

  private findDefault(projectId: string): Agent | null {
    // The same expression as the unique index connections_default_agent, so SQLite answers from it.
    const row = this.sql(`SELECT id FROM connections WHERE project_id = ? AND kind = 'agent' AND json_extract(config, '$.is_default') = 1`).get(projectId) as
      | { id: string }
      | undefined;
    return row ? this.find(row.id) : null;
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
