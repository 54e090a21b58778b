import type { MetadataStore } from '../../db/metadata/metadataStore.ts';

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
 * The `agent_tool_calls` table, on the metadata store: one row per bound-tool call, for an
 * agent's status. Old rows are pruned as calls are recorded, except each agent's latest (highest
 * `seq`), so its last call stays known.
 */
export class ToolCallLog {
  private prunedAt = 0;

  constructor(
    private readonly metadata: MetadataStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records a call of an agent the caller found (AgentToolBindings.recordCall); one deleted
   * meanwhile refuses the row on SQLite (the foreign key), which is dropped: nothing to report
   * it on. (PostgreSQL has no connections table yet to refuse it: see migrations/postgres.)
   */
  async record(agentId: string, toolName: string, ok: boolean, durationMs: number, surface: CallSurface): Promise<void> {
    const now = this.now();
    try {
      await this.metadata.db
        .insertInto('agent_tool_calls')
        .values({ agent_id: agentId, tool_name: toolName, ok: ok ? 1 : 0, duration_ms: Math.max(0, Math.round(durationMs)), surface, at: new Date(now).toISOString() })
        .execute();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_FOREIGNKEY') throw err;
    }
    if (now - this.prunedAt >= PRUNE_EVERY_MS) await this.prune(now);
  }

  async figures(agentId: string): Promise<CallFigures> {
    const since = new Date(this.now() - DAY_MS).toISOString();
    const day = await this.metadata.db
      .selectFrom('agent_tool_calls')
      .select((eb) => [eb.fn.countAll<number>().as('calls'), eb.fn.sum<number>(eb.case().when('ok', '=', 0).then(1).else(0).end()).as('errors')])
      .where('agent_id', '=', agentId)
      .where('at', '>=', since)
      .executeTakeFirstOrThrow();
    const last = await this.metadata.db
      .selectFrom('agent_tool_calls')
      .select((eb) => eb.fn.max('at').as('at'))
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return { calls_24h: Number(day.calls), errors_24h: Number(day.errors ?? 0), last_call_at: last?.at ?? null };
  }

  private async prune(now: number): Promise<void> {
    this.prunedAt = now;
    await this.metadata.db
      .deleteFrom('agent_tool_calls')
      .where('at', '<', new Date(now - KEEP_MS).toISOString())
      .where('seq', 'not in', (eb) => eb.selectFrom('agent_tool_calls as latest').select((l) => l.fn.max('latest.seq').as('seq')).groupBy('latest.agent_id'))
      .execute();
  }
}
