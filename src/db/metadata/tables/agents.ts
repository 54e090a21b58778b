import type { Generated } from 'kysely';

/** Agents' records (migrations 012-014, 027, 032): src/agents/. The agents themselves are rows of `connections`. */
export interface AgentsTables {
  agent_accesses: AgentAccessesTable;
  agent_bash_tools: AgentBashToolsTable;
  chat_sessions: ChatSessionsTable;
  chat_messages: ChatMessagesTable;
  agent_executions: AgentExecutionsTable;
  agent_workspaces: AgentWorkspacesTable;
  agent_workspace_files: AgentWorkspaceFilesTable;
  agent_tool_bindings: AgentToolBindingsTable;
  agent_tool_calls: AgentToolCallsTable;
}

/** What an agent may reach: one row per node (null: the whole project). */
export interface AgentAccessesTable {
  id: string;
  agent_id: string;
  node_id: string | null;
  mode: 'read' | 'read_write';
  /** JSON array of tool names. */
  tools: string;
  created_at: string;
  updated_at: string;
}

/** A shell over a folder's subtree (null: the whole project), named uniquely per agent. */
export interface AgentBashToolsTable {
  id: string;
  agent_id: string;
  node_id: string | null;
  name: string;
  mode: 'read' | 'read_write';
  /** JSON object: the sandbox limits. */
  limits: string;
  created_at: string;
  updated_at: string;
}

export interface ChatSessionsTable {
  id: string;
  agent_id: string;
  project_id: string;
  title: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** A session's messages, numbered from 1 in the session (`seq`). */
export interface ChatMessagesTable {
  id: string;
  session_id: string;
  seq: number;
  role: 'user' | 'assistant' | 'tool_call' | 'tool_result';
  /** JSON object. */
  content: string;
  execution_id: string | null;
  created_at: string;
}

/** One chat turn; `seq` is the insertion order (pages break ties on the start time with it). */
export interface AgentExecutionsTable {
  seq: Generated<number>;
  id: string;
  agent_id: string;
  session_id: string | null;
  status: 'running' | 'succeeded' | 'failed' | 'cancelled';
  started_at: string;
  finished_at: string | null;
  model: string;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  /** JSON arrays. */
  tool_calls: Generated<string>;
  versions_written: Generated<string>;
  /** JSON object, or null. */
  error: string | null;
  /** The cluster node running it (migration 032): its start-up recovery touches only its own; null on a single box. */
  cluster_node: string | null;
}

export interface AgentWorkspacesTable {
  agent_id: string;
  project_id: string;
  base_version: number;
  /** JSON array of paths. */
  roots: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** A drafted path of a workspace (see migration 013). */
export interface AgentWorkspaceFilesTable {
  agent_id: string;
  path: string;
  action: 'written' | 'deleted';
  type: 'markdown' | 'json' | 'file' | 'folder';
  content: Buffer | null;
  base_version: number | null;
  base_node_id: string | null;
  base_project_version: number;
  updated_at: string;
}

/** A tool of the project bound to an agent; null name or description: the tool's own. */
export interface AgentToolBindingsTable {
  id: string;
  agent_id: string;
  tool_id: string;
  name: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** One call of a bound tool; `seq` is the insertion order (the prune keeps each agent's latest). */
export interface AgentToolCallsTable {
  seq: Generated<number>;
  agent_id: string;
  tool_name: string;
  /** 1 ok, 0 failed. */
  ok: number;
  duration_ms: number;
  surface: 'mcp' | 'chat';
  at: string;
}
