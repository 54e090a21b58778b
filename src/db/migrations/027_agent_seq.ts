import type { Migration } from '../migrate.ts';

/**
 * Agents' insertion orders as columns (issue 30): execution pages broke ties on the start time by
 * rowid, and the call log's prune kept each agent's latest call by rowid, which PostgreSQL has
 * not. `seq` takes the rowid's place, existing rows keeping their order. The tables are not
 * rebuilt (chat_messages refers to agent_executions, and dropping it would set their
 * execution_id to null): a trigger numbers each new row after the highest so far, which a
 * VACUUM renumbering rowids cannot disturb. PostgreSQL has an identity column instead.
 */
export const agentSeqMigration: Migration = {
  version: 27,
  name: 'agent_seq',
  sql: `
ALTER TABLE agent_executions ADD COLUMN seq INTEGER;
UPDATE agent_executions SET seq = rowid;
CREATE UNIQUE INDEX agent_executions_seq ON agent_executions(seq);
DROP INDEX agent_executions_agent;
CREATE INDEX agent_executions_agent ON agent_executions(agent_id, started_at, seq);
CREATE TRIGGER agent_executions_number AFTER INSERT ON agent_executions WHEN NEW.seq IS NULL
BEGIN
  UPDATE agent_executions SET seq = (SELECT coalesce(max(seq), 0) + 1 FROM agent_executions) WHERE rowid = NEW.rowid;
END;

ALTER TABLE agent_tool_calls ADD COLUMN seq INTEGER;
UPDATE agent_tool_calls SET seq = rowid;
CREATE UNIQUE INDEX agent_tool_calls_seq ON agent_tool_calls(seq);
CREATE INDEX agent_tool_calls_agent_seq ON agent_tool_calls(agent_id, seq);
CREATE TRIGGER agent_tool_calls_number AFTER INSERT ON agent_tool_calls WHEN NEW.seq IS NULL
BEGIN
  UPDATE agent_tool_calls SET seq = (SELECT coalesce(max(seq), 0) + 1 FROM agent_tool_calls) WHERE rowid = NEW.rowid;
END;
`,
};
