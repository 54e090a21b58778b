import type { Migration } from '../migrate.ts';

/**
 * Tools bound to agents (issue 13, spec 4.9 `/mcp/agents/{agent_id}/tools`): which of the
 * project's tools an agent offers (on its MCP server, and in chat), under which name and
 * description (NULL: the tool's own, following its renames). A binding goes with its agent or its
 * tool (ON DELETE CASCADE).
 *
 * agent_tool_calls holds one row per bound-tool call for the status figures (calls and errors in
 * the last 24 hours, last call); rows older than 7 days are pruned as calls are recorded.
 */
export const agentToolBindingsMigration: Migration = {
  version: 14,
  name: 'agent_tool_bindings',
  sql: `
CREATE TABLE agent_tool_bindings (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  tool_id TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  name TEXT,
  description TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (agent_id, tool_id)
);
-- A name given explicitly is the agent's alone (a default name is checked by the code, as it follows the tool's).
CREATE UNIQUE INDEX agent_tool_bindings_name ON agent_tool_bindings(agent_id, name) WHERE name IS NOT NULL;
CREATE INDEX agent_tool_bindings_tool ON agent_tool_bindings(tool_id);

CREATE TABLE agent_tool_calls (
  agent_id TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  ok INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  surface TEXT NOT NULL CHECK (surface IN ('mcp','chat')),
  at TEXT NOT NULL
);
CREATE INDEX agent_tool_calls_agent ON agent_tool_calls(agent_id, at);
CREATE INDEX agent_tool_calls_at ON agent_tool_calls(at);
`,
};
