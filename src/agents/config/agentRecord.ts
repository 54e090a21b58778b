import type { ConnectionMode, ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import type { EndpointLimits } from '../../sandbox/limits.ts';

/** The tools an access may offer the agent over its node's subtree. */
export const accessToolNames = ['ls', 'cat', 'tree', 'search', 'grep', 'write', 'query_json', 'blame'] as const;
export type AccessToolName = (typeof accessToolNames)[number];

/** What an access offers when it does not say: every reading tool, plus `write` when it may write. */
export const defaultAccessTools: Record<ConnectionMode, readonly AccessToolName[]> = {
  read: ['ls', 'cat', 'tree', 'search', 'grep', 'query_json', 'blame'],
  read_write: ['ls', 'cat', 'tree', 'search', 'grep', 'write', 'query_json', 'blame'],
};

export const DEFAULT_MAX_TOOL_ROUNDS = 20;
/** Tool calls one model answer may make that are run; the rest are answered "not run". */
export const DEFAULT_MAX_TOOL_CALLS_PER_ROUND = 20;
export const DEFAULT_BASH_NAME = 'bash';
/** A bash tool's name is offered to the model as a tool name: the providers' common alphabet. */
export const bashNamePattern = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** An agent's settings, kept in its connection's config (next to the internal `is_default` marker). */
export interface AgentSettings {
  system_prompt: string;
  /** `provider:model`, e.g. `openai:gpt-4.1-mini` (a bare name given is kept with its provider). */
  model: string;
  description: string;
  /** Null: the provider's default. */
  temperature: number | null;
  max_tool_rounds: number;
  max_tool_calls_per_round: number;
}

/**
 * An agent (spec 4.8): a connection of kind `agent`. Its id is the connection's id, its writes
 * carry actor `agent` and author `agent:<name>`, and its key authenticates it.
 */
export interface Agent {
  connection: ConnectionRecord;
  settings: AgentSettings;
  /** The project's default agent (GET /agent-config/default). */
  isDefault: boolean;
}

/** Which node (null: the whole project) an agent may reach, how, and with which tools. */
export interface AgentAccess {
  id: string;
  agent_id: string;
  node_id: string | null;
  mode: ConnectionMode;
  tools: AccessToolName[];
  created_at: string;
  updated_at: string;
}

/** A shell over a folder's subtree (null: the whole project), run by the sandbox runtime. */
export interface AgentBashTool {
  id: string;
  agent_id: string;
  node_id: string | null;
  name: string;
  mode: ConnectionMode;
  /** The endpoint limits it runs with ({} = the defaults). */
  limits: EndpointLimits;
  created_at: string;
  updated_at: string;
}

/**
 * An access or bash tool with its node's current path: '' for the whole project, null when the
 * node is in the trash, was deleted or left the project (it then grants nothing).
 */
export type Located<T> = T & { path: string | null };

/** The settings an agent's connection config holds (missing fields take their defaults). */
export function toAgent(connection: ConnectionRecord): Agent {
  const c = JSON.parse(connection.config) as Record<string, unknown>;
  return { connection, isDefault: c.is_default === true, settings: agentSettingsOf(c) };
}

/** The settings an agent's parsed connection config holds. */
export function agentSettingsOf(c: Record<string, unknown>): AgentSettings {
  return {
    system_prompt: typeof c.system_prompt === 'string' ? c.system_prompt : '',
    model: typeof c.model === 'string' ? c.model : '',
    description: typeof c.description === 'string' ? c.description : '',
    temperature: typeof c.temperature === 'number' ? c.temperature : null,
    max_tool_rounds: typeof c.max_tool_rounds === 'number' ? c.max_tool_rounds : DEFAULT_MAX_TOOL_ROUNDS,
    max_tool_calls_per_round: typeof c.max_tool_calls_per_round === 'number' ? c.max_tool_calls_per_round : DEFAULT_MAX_TOOL_CALLS_PER_ROUND,
  };
}

/** The connection config that stores an agent's settings. */
export function agentConfig(settings: AgentSettings, isDefault: boolean): Record<string, unknown> {
  return { ...settings, ...(isDefault ? { is_default: true } : {}) };
}
