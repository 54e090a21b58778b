import type { Migration } from '../migrate.ts';

/**
 * Agents (issue 14, spec 4.8). An agent is a connection of kind `agent` (its settings in the
 * connection's config); these tables hold what it may reach (accesses, bash tools), its chat
 * sessions with their messages, and one execution record per chat turn. Everything hangs off
 * the agent's connection or its project with ON DELETE CASCADE, so deleting an agent or a
 * project removes its rows.
 *
 * - A NULL node_id is the whole project. SQLite treats NULLs as distinct in a UNIQUE
 *   constraint, so uniqueness per node is an expression index over ifnull(node_id, '').
 * - An execution outlives the session it ran in (session_id SET NULL): it records what the
 *   agent did (versions written), which stays true after the conversation is deleted.
 * - The default agent of a project is marked in its config (`is_default`); the partial unique
 *   index makes a second one impossible whatever the callers race.
 */
export const agentsMigration: Migration = {
  version: 12,
  name: 'agents',
  sql: `
CREATE UNIQUE INDEX connections_default_agent ON connections(project_id)
  WHERE kind = 'agent' AND json_extract(config, '$.is_default') = 1;

CREATE TABLE agent_accesses (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  node_id TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('read','read_write')),
  tools TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX agent_accesses_node ON agent_accesses(agent_id, ifnull(node_id, ''));

CREATE TABLE agent_bash_tools (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  node_id TEXT,
  name TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('read','read_write')),
  limits TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (agent_id, name)
);

CREATE TABLE chat_sessions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX chat_sessions_agent ON chat_sessions(agent_id, updated_at);
CREATE INDEX chat_sessions_project ON chat_sessions(project_id, updated_at);

CREATE TABLE agent_executions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  session_id TEXT REFERENCES chat_sessions(id) ON DELETE SET NULL,
  status TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','cancelled')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  tool_calls TEXT NOT NULL DEFAULT '[]',
  versions_written TEXT NOT NULL DEFAULT '[]',
  error TEXT
);
-- Pages newest first by (started_at, rowid): SQLite keeps the rowid in every index.
CREATE INDEX agent_executions_agent ON agent_executions(agent_id, started_at);
CREATE INDEX agent_executions_session ON agent_executions(session_id);
CREATE INDEX agent_executions_running ON agent_executions(status) WHERE status = 'running';

CREATE TABLE chat_messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user','assistant','tool_call','tool_result')),
  content TEXT NOT NULL,
  execution_id TEXT REFERENCES agent_executions(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, seq)
);
CREATE INDEX chat_messages_execution ON chat_messages(execution_id);
`,
};
