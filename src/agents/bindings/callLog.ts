import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';

/** Where a bound tool was called from: the agent's MCP server or a chat turn. */
export type CallSurface = 'mcp' | 'chat';

export interface CallFigures {
  calls_24h: number;
  errors_24h: number;
  last_call_at: string | null;
}

const DAY_MS = 24 * 3600_000;
/** Calls are kept this long (the figures look back one day; the rest is slack for the prune). */
const KEEP_MS = 7 * DAY_MS;
/** Pruning runs at most this often, on the next recorded call. */
const PRUNE_EVERY_MS = 3600_000;

/**
 * The `agent_tool_calls` table: one row per bound-tool call, for an agent's status. Old rows are
 * pruned as calls are recorded, except each agent's latest, so its last call stays known.
 */
export class ToolCallLog {
  private readonly sql: ReturnType<typeof statementCache>;
  private prunedAt = 0;

  constructor(db: Db, private readonly now: () => number = Date.now) {
    this.sql = statementCache(db);
  }

  /** Records a call; a call of an agent deleted meanwhile is dropped (nothing to report it on). */
  record(agentId: string, toolName: string, ok: boolean, durationMs: number, surface: CallSurface): void {
    const now = this.now();
    this.sql(
      `INSERT INTO agent_tool_calls (agent_id, tool_name, ok, duration_ms, surface, at)
       SELECT @agentId, @toolName, @ok, @durationMs, @surface, @at WHERE EXISTS (SELECT 1 FROM connections WHERE id = @agentId)`,
    ).run({ agentId, toolName, ok: ok ? 1 : 0, durationMs: Math.max(0, Math.round(durationMs)), surface, at: new Date(now).toISOString() });
    if (now - this.prunedAt >= PRUNE_EVERY_MS) this.prune(now);
  }

  figures(agentId: string): CallFigures {
    const since = new Date(this.now() - DAY_MS).toISOString();
    const day = this.sql('SELECT COUNT(*) AS calls, COALESCE(SUM(ok = 0), 0) AS errors FROM agent_tool_calls WHERE agent_id = ? AND at >= ?').get(agentId, since) as {
      calls: number;
      errors: number;
    };
    const last = this.sql('SELECT MAX(at) AS at FROM agent_tool_calls WHERE agent_id = ?').get(agentId) as { at: string | null };
    return { calls_24h: day.calls, errors_24h: day.errors, last_call_at: last.at };
  }

  private prune(now: number): void {
    this.prunedAt = now;
    this.sql('DELETE FROM agent_tool_calls WHERE at < ? AND rowid NOT IN (SELECT MAX(rowid) FROM agent_tool_calls GROUP BY agent_id)').run(new Date(now - KEEP_MS).toISOString());
  }
}
