import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
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

const fromRow = ({ seq: _seq, cluster_node: _node, ...r }: Row & { seq?: number; cluster_node?: string | null }): ExecutionRecord => ({
  ...r,
  tool_calls: JSON.parse(r.tool_calls) as ExecutionToolCall[],
  versions_written: JSON.parse(r.versions_written) as VersionWritten[],
  error: r.error === null ? null : (JSON.parse(r.error) as ExecutionError),
});

export const INTERRUPTED: ExecutionError = { code: 'interrupted', message: 'The service stopped while this turn was running.' };

/**
 * The `agent_executions` table, on the metadata store: one record per chat turn, `running` from
 * its start until the loop finishes it. Authorization is the caller's (the agent's readers see
 * its executions).
 */
export class ExecutionStore {
  /** `nodeId`: the cluster node this process is, recorded on the turns it starts; null on a single box. */
  constructor(
    private readonly metadata: MetadataStore,
    private readonly nodeId: string | null = null,
  ) {}

  /** Each execution with the creator of its chat session (the session decides who sees the execution's details). */
  private selectAll() {
    return this.metadata.db
      .selectFrom('agent_executions as e')
      .leftJoin('chat_sessions as s', 's.id', 'e.session_id')
      .selectAll('e')
      .select('s.created_by as chat_created_by');
  }

  async start(input: { agentId: string; sessionId: string | null; model: string }): Promise<string> {
    const id = newId('exe');
    await this.metadata.db
      .insertInto('agent_executions')
      .values({ id, agent_id: input.agentId, session_id: input.sessionId, status: 'running', started_at: nowIso(), model: input.model, cluster_node: this.nodeId })
      .execute();
    return id;
  }

  /** Records how a running turn ended; false when it was not running (already finished, or unknown). */
  async finish(id: string, outcome: ExecutionOutcome): Promise<boolean> {
    const r = await this.metadata.db
      .updateTable('agent_executions')
      .set({
        status: outcome.status,
        finished_at: nowIso(),
        input_tokens: outcome.inputTokens,
        output_tokens: outcome.outputTokens,
        tool_calls: JSON.stringify(outcome.toolCalls),
        versions_written: JSON.stringify(outcome.versionsWritten),
        error: outcome.error ? JSON.stringify(outcome.error) : null,
      })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async find(id: string): Promise<ExecutionRecord | null> {
    const r = await this.selectAll().where('e.id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /**
   * An agent's executions, newest first. `before` is the id of an execution of this agent (the
   * `next` of the previous page): the page holds those started before it. Ties on the start
   * time are broken by insertion order (`seq`: ids are random), so a page boundary never skips
   * or repeats one.
   */
  async list(agentId: string, page: { limit: number; before?: string }): Promise<{ items: ExecutionRecord[]; next: string | null }> {
    let q = this.selectAll().where('e.agent_id', '=', agentId);
    if (page.before !== undefined) {
      const cursor = await this.metadata.db.selectFrom('agent_executions').select(['started_at', 'seq']).where('id', '=', page.before).where('agent_id', '=', agentId).executeTakeFirst();
      if (!cursor) throw invalidField('before', "not an execution of this agent (pass the previous page's `next`)");
      q = q.where((eb) => eb.or([eb('e.started_at', '<', cursor.started_at), eb.and([eb('e.started_at', '=', cursor.started_at), eb('e.seq', '<', cursor.seq)])]));
    }
    const rows = await q.orderBy('e.started_at', 'desc').orderBy('e.seq', 'desc').limit(page.limit + 1).execute();
    const items = rows.slice(0, page.limit).map(fromRow);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!.id : null };
  }

  /**
   * At start-up: turns left running by a crash or a stop cannot finish any more; they become
   * failed (`interrupted`). On a single box (no node id) every running turn, whichever cluster_node it
   * has. A cluster node only its own and those with no node, left from before the cluster (the
   * first node to start takes them: no process runs them any more); other nodes' turns may be
   * going on. A dead node's turns stay running until its projects' new owner recovers them (a
   * later step).
   */
  async failInterrupted(): Promise<number> {
    const nodeId = this.nodeId;
    let q = this.metadata.db
      .updateTable('agent_executions')
      .set({ status: 'failed', finished_at: nowIso(), error: JSON.stringify(INTERRUPTED) })
      .where('status', '=', 'running');
    if (nodeId !== null) q = q.where((eb) => eb.or([eb('cluster_node', '=', nodeId), eb('cluster_node', 'is', null)]));
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}
