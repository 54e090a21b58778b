import type { Insertable, Selectable } from 'kysely';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import { oneOf } from '../../db/metadata/oneOf.ts';
import type { IngestTasksTable } from '../../db/metadata/tables/ingest.ts';
import { nowIso } from '../../util/ids.ts';
import type { Progress } from '../converters/converter.ts';
import type { TaskError, TaskRecord, TaskResult, TaskStatus } from './taskTypes.ts';

type Row = Selectable<IngestTasksTable>;

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

const fromRow = ({ seq: _seq, cluster_node: _node, ...r }: Row): TaskRecord => ({
  ...r,
  mode: r.mode as TaskRecord['mode'],
  keep_original: r.keep_original === 1,
  input: JSON.parse(r.input) as TaskRecord['input'],
  progress: parse<Progress>(r.progress),
  result: parse<TaskResult>(r.result),
  error: parse<TaskError>(r.error),
  actor: JSON.parse(r.actor) as TaskRecord['actor'],
});

export type NewTask = Omit<TaskRecord, 'status' | 'progress' | 'result' | 'error' | 'started_at' | 'finished_at'>;

/** A claim that lost its compare-and-set to another claimer tries the next task this many times. */
const CLAIM_ATTEMPTS = 5;

/**
 * The `ingest_tasks` table, on the metadata store: the queue's durable state. Status changes are
 * compare-and-sets on the status the caller expects (`WHERE status = ...`), so a cancel and a
 * worker finishing the same task, or two processes claiming it, cannot both win. Authorization
 * is the caller's business.
 */
export class TaskStore {
  /** `nodeId`: the cluster node this process is, recorded on the tasks it claims; null on a single box. */
  constructor(
    private readonly metadata: MetadataStore,
    private readonly nodeId: string | null = null,
  ) {}

  /** All of them or none; their `seq` follows the order given. */
  async insert(tasks: NewTask[]): Promise<void> {
    if (tasks.length === 0) return;
    const rows: Insertable<IngestTasksTable>[] = tasks.map((t) => ({
      id: t.id,
      project_id: t.project_id,
      source: t.source,
      kind: t.kind,
      status: 'queued',
      target_path: t.target_path,
      mode: t.mode,
      keep_original: t.keep_original ? 1 : 0,
      rule_id: t.rule_id,
      input: JSON.stringify(t.input),
      created_by: t.created_by,
      actor: JSON.stringify(t.actor),
      created_at: t.created_at,
    }));
    await this.metadata.transaction(async (trx) => {
      for (const row of rows) await trx.insertInto('ingest_tasks').values(row).execute();
    });
  }

  async find(id: string): Promise<TaskRecord | null> {
    const r = await this.metadata.db.selectFrom('ingest_tasks').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : null;
  }

  /** A project's tasks, newest first: id and target folder only (the caller filters by scope, then reads a page). */
  async summaries(projectId: string, status?: TaskStatus): Promise<{ id: string; target_path: string }[]> {
    let q = this.metadata.db.selectFrom('ingest_tasks').select(['id', 'target_path']).where('project_id', '=', projectId);
    if (status) q = q.where('status', '=', status);
    return await q.orderBy('seq', 'desc').execute();
  }

  /** Tasks by id, in the order given (the ids that exist). */
  async findMany(ids: readonly string[]): Promise<TaskRecord[]> {
    if (ids.length === 0) return [];
    const { db, engine } = this.metadata;
    const rows = await db.selectFrom('ingest_tasks').selectAll().where((eb) => oneOf(engine, eb.ref('id'), [...ids])).execute();
    const byId = new Map(rows.map((r) => [r.id, fromRow(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** The projects that have queued tasks, in id order. */
  async queuedProjects(): Promise<string[]> {
    const rows = await this.metadata.db.selectFrom('ingest_tasks').select('project_id').distinct().where('status', '=', 'queued').orderBy('project_id').execute();
    return rows.map((r) => r.project_id);
  }

  /**
   * Takes the next queued task and marks it running. The project is one of those with queued
   * tasks that have the fewest running (`running`, by project), and among them projects take
   * turns (the first after `after` in id order, wrapping around); within a project tasks go in
   * submission order (`seq`). A project that queued a thousand files does not make the others
   * wait for all of them, nor take the workers another project's task could have. `only`: the
   * projects this process runs tasks of (several workers: those it owns); all when absent.
   * The claim is a compare-and-set on the status: of two processes claiming the same task one
   * wins, and the other looks again. The task records this node as the one running it.
   */
  async claimNext(after: string | null, running: ReadonlyMap<string, number> = new Map(), only?: ReadonlySet<string>): Promise<TaskRecord | null> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const queued = await this.queuedProjects();
      const projects = only ? queued.filter((p) => only.has(p)) : queued;
      if (projects.length === 0) return null;
      const load = (p: string) => running.get(p) ?? 0;
      const fewest = Math.min(...projects.map(load));
      const candidates = projects.filter((p) => load(p) === fewest);
      const next = candidates.find((p) => p > (after ?? '')) ?? candidates[0]!;
      const head = await this.metadata.db
        .selectFrom('ingest_tasks')
        .select('id')
        .where('status', '=', 'queued')
        .where('project_id', '=', next)
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!head) continue;
      const claimed = await this.metadata.db
        .updateTable('ingest_tasks')
        .set({ status: 'running', started_at: nowIso(), progress: null, result: null, error: null, cluster_node: this.nodeId })
        .where('id', '=', head.id)
        .where('status', '=', 'queued')
        .returningAll()
        .executeTakeFirst();
      if (claimed) return fromRow(claimed);
    }
    return null;
  }

  /** Moves the task from `from` to `to` (finished_at set for a finished status); false when it was not in `from`. */
  async transition(id: string, from: TaskStatus | TaskStatus[], to: TaskStatus, fields: { error?: TaskError } = {}): Promise<boolean> {
    const froms = Array.isArray(from) ? from : [from];
    const finished = to === 'succeeded' || to === 'failed' || to === 'cancelled' ? nowIso() : null;
    const { db, engine } = this.metadata;
    const r = await db
      .updateTable('ingest_tasks')
      .set({
        status: to,
        finished_at: finished,
        ...(fields.error ? { error: JSON.stringify(fields.error) } : {}),
        ...(to === 'queued' ? { started_at: null } : {}),
      })
      .where('id', '=', id)
      .where((eb) => oneOf(engine, eb.ref('status'), froms))
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async setProgress(id: string, progress: Progress): Promise<void> {
    await this.metadata.db.updateTable('ingest_tasks').set({ progress: JSON.stringify(progress) }).where('id', '=', id).where('status', '=', 'running').execute();
  }

  /**
   * A running task succeeded with `result`: status and result in one statement (no reader sees
   * the one without the other), a compare-and-set on `running`; false when it was no longer running.
   */
  async succeed(id: string, result: TaskResult): Promise<boolean> {
    const r = await this.metadata.db
      .updateTable('ingest_tasks')
      .set({ status: 'succeeded', finished_at: nowIso(), result: JSON.stringify(result) })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /**
   * The tasks left running (after a stop: each is finished from its commit, or queued again). On
   * a single box (no node id) every running task, whichever cluster_node it has. A cluster node's own
   * and those with no node, left from before the cluster (the first node to start takes them: no
   * process runs them any more); other nodes' tasks may be going on. A dead node's tasks stay
   * running until its projects' new owner recovers them (a later step).
   */
  async running(): Promise<TaskRecord[]> {
    const nodeId = this.nodeId;
    let q = this.metadata.db.selectFrom('ingest_tasks').selectAll().where('status', '=', 'running');
    if (nodeId !== null) q = q.where((eb) => eb.or([eb('cluster_node', '=', nodeId), eb('cluster_node', 'is', null)]));
    const rows = await q.orderBy('seq').execute();
    return rows.map(fromRow);
  }

  async idsWithStatus(status: TaskStatus): Promise<Set<string>> {
    const rows = await this.metadata.db.selectFrom('ingest_tasks').select('id').where('status', '=', status).execute();
    return new Set(rows.map((r) => r.id));
  }

  async statusesOf(ids: readonly string[]): Promise<Map<string, TaskStatus>> {
    if (ids.length === 0) return new Map();
    const { db, engine } = this.metadata;
    const rows = await db.selectFrom('ingest_tasks').select(['id', 'status']).where((eb) => oneOf(engine, eb.ref('id'), [...ids])).execute();
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  async count(status: TaskStatus): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('ingest_tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', status)
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
