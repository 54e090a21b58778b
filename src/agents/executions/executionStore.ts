import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { invalidField } from '../../errors/domainError.ts';
import { newId, nowIso } from '../../util/ids.ts';

export type ExecutionStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One tool call of a turn, as the execution records it. */
export interface ExecutionToolCall {
  name: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  duration_ms: number;
}

/** A version a turn wrote. */
export interface VersionWritten {
  path: string;
  version: number;
}

export interface ExecutionError {
  code: string;
  message?: string;
  [more: string]: unknown;
}

/** One chat turn of an agent (spec 4.8): what it cost, which tools it called and what it wrote. */
export interface ExecutionRecord {
  id: string;
  agent_id: string;
  /** Null once the session it ran in was deleted (the record of what the agent did stays). */
  session_id: string | null;
  status: ExecutionStatus;
  started_at: string;
  finished_at: string | null;
  model: string;
  input_tokens: number;
  output_tokens: number;
  tool_calls: ExecutionToolCall[];
  versions_written: VersionWritten[];
  error: ExecutionError | null;
  /** Who started the chat the turn ran in (a user id, or a key's connection id); null once the session was deleted. */
  chat_created_by: string | null;
}

export interface ExecutionOutcome {
  status: Exclude<ExecutionStatus, 'running'>;
  inputTokens: number;
  outputTokens: number;
  toolCalls: ExecutionToolCall[];
  versionsWritten: VersionWritten[];
  error?: ExecutionError | null;
}

type Row = Omit<ExecutionRecord, 'tool_calls' | 'versions_written' | 'error'> & { tool_calls: string; versions_written: string; error: string | null };

const fromRow = (r: Row): ExecutionRecord => ({
  ...r,
  tool_calls: JSON.parse(r.tool_calls) as ExecutionToolCall[],
  versions_written: JSON.parse(r.versions_written) as VersionWritten[],
  error: r.error === null ? null : (JSON.parse(r.error) as ExecutionError),
});

/** Each execution with the creator of its chat session (the session decides who sees the execution's details). */
const SELECT = 'SELECT e.*, s.created_by AS chat_created_by FROM agent_executions e LEFT JOIN chat_sessions s ON s.id = e.session_id';

export const INTERRUPTED: ExecutionError = { code: 'interrupted', message: 'The service stopped while this turn was running.' };

/**
 * The `agent_executions` table: one record per chat turn, `running` from its start until the
 * loop finishes it. Authorization is the caller's (the agent's readers see its executions).
 */
export class ExecutionStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  start(input: { agentId: string; sessionId: string | null; model: string }): string {
    const id = newId('exe');
    this.sql(`INSERT INTO agent_executions (id, agent_id, session_id, status, started_at, model) VALUES (?, ?, ?, 'running', ?, ?)`).run(
      id,
      input.agentId,
      input.sessionId,
      nowIso(),
      input.model,
    );
    return id;
  }

  /** Records how a running turn ended; false when it was not running (already finished, or unknown). */
  finish(id: string, outcome: ExecutionOutcome): boolean {
    const r = this.sql(
      `UPDATE agent_executions SET status = @status, finished_at = @finished_at, input_tokens = @input_tokens, output_tokens = @output_tokens,
         tool_calls = @tool_calls, versions_written = @versions_written, error = @error
       WHERE id = @id AND status = 'running'`,
    ).run({
      id,
      status: outcome.status,
      finished_at: nowIso(),
      input_tokens: outcome.inputTokens,
      output_tokens: outcome.outputTokens,
      tool_calls: JSON.stringify(outcome.toolCalls),
      versions_written: JSON.stringify(outcome.versionsWritten),
      error: outcome.error ? JSON.stringify(outcome.error) : null,
    });
    return r.changes === 1;
  }

  find(id: string): ExecutionRecord | null {
    const r = this.sql(`${SELECT} WHERE e.id = ?`).get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  /**
   * An agent's executions, newest first. `before` is the id of an execution of this agent (the
   * `next` of the previous page): the page holds those started before it. Ties on the start
   * time are broken by insertion order (rowid: ids are random; VACUUM may renumber rowids but
   * keeps their order), so a page boundary never skips or repeats one.
   */
  list(agentId: string, page: { limit: number; before?: string }): { items: ExecutionRecord[]; next: string | null } {
    let rows: Row[];
    if (page.before === undefined) {
      rows = this.sql(`${SELECT} WHERE e.agent_id = ? ORDER BY e.started_at DESC, e.rowid DESC LIMIT ?`).all(agentId, page.limit + 1) as Row[];
    } else {
      const cursor = this.sql('SELECT started_at, rowid AS seq FROM agent_executions WHERE id = ? AND agent_id = ?').get(page.before, agentId) as { started_at: string; seq: number } | undefined;
      if (!cursor) throw invalidField('before', "not an execution of this agent (pass the previous page's `next`)");
      rows = this.sql(
        `${SELECT} WHERE e.agent_id = @agentId AND (e.started_at < @at OR (e.started_at = @at AND e.rowid < @seq))
         ORDER BY e.started_at DESC, e.rowid DESC LIMIT @limit`,
      ).all({ agentId, at: cursor.started_at, seq: cursor.seq, limit: page.limit + 1 }) as Row[];
    }
    const items = rows.slice(0, page.limit).map(fromRow);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!.id : null };
  }

  /** At start-up: turns left running by a crash or a stop cannot finish any more; they become failed (`interrupted`). */
  failInterrupted(): number {
    return this.sql(`UPDATE agent_executions SET status = 'failed', finished_at = ?, error = ? WHERE status = 'running'`).run(nowIso(), JSON.stringify(INTERRUPTED)).changes;
  }
}
