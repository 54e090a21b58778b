import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { nowIso } from '../../util/ids.ts';
import type { Progress } from '../converters/converter.ts';
import type { TaskError, TaskRecord, TaskResult, TaskStatus } from './taskTypes.ts';

type Row = Omit<TaskRecord, 'keep_original' | 'input' | 'progress' | 'result' | 'error' | 'actor'> & {
  keep_original: number;
  input: string;
  progress: string | null;
  result: string | null;
  error: string | null;
  actor: string;
};

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

const fromRow = (r: Row): TaskRecord => ({
  ...r,
  keep_original: r.keep_original === 1,
  input: JSON.parse(r.input) as TaskRecord['input'],
  progress: parse<Progress>(r.progress),
  result: parse<TaskResult>(r.result),
  error: parse<TaskError>(r.error),
  actor: JSON.parse(r.actor) as TaskRecord['actor'],
});

export type NewTask = Omit<TaskRecord, 'status' | 'progress' | 'result' | 'error' | 'started_at' | 'finished_at'>;

/**
 * The `ingest_tasks` table: the queue's durable state. Status changes are conditional on the
 * status the caller expects (`WHERE status = ...`), so a cancel and a worker finishing the same
 * task cannot both win. Authorization is the caller's business.
 */
export class TaskStore {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  /** All of them or none. */
  insert(tasks: NewTask[]): void {
    const insert = this.sql(`INSERT INTO ingest_tasks (id, project_id, source, kind, status, target_path, mode, keep_original, rule_id, input, created_by, actor, created_at)
      VALUES (@id, @project_id, @source, @kind, 'queued', @target_path, @mode, @keep_original, @rule_id, @input, @created_by, @actor, @created_at)`);
    this.db.transaction(() => {
      for (const t of tasks) {
        insert.run({ ...t, keep_original: t.keep_original ? 1 : 0, input: JSON.stringify(t.input), actor: JSON.stringify(t.actor) });
      }
    })();
  }

  find(id: string): TaskRecord | null {
    const r = this.sql('SELECT * FROM ingest_tasks WHERE id = ?').get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  /** A project's tasks, newest first: id and target folder only (the caller filters by scope, then reads a page). */
  summaries(projectId: string, status?: TaskStatus): { id: string; target_path: string }[] {
    return (status
      ? this.sql('SELECT id, target_path FROM ingest_tasks WHERE project_id = ? AND status = ? ORDER BY rowid DESC').all(projectId, status)
      : this.sql('SELECT id, target_path FROM ingest_tasks WHERE project_id = ? ORDER BY rowid DESC').all(projectId)) as { id: string; target_path: string }[];
  }

  /** The projects that have queued tasks, in id order. */
  queuedProjects(): string[] {
    return (this.sql(`SELECT DISTINCT project_id FROM ingest_tasks WHERE status = 'queued' ORDER BY project_id`).all() as { project_id: string }[]).map((r) => r.project_id);
  }

  /**
   * Takes the next queued task and marks it running. The project is one of those with queued
   * tasks that have the fewest running (`running`, by project), and among them projects take
   * turns (the first after `after` in id order, wrapping around); within a project tasks go in
   * submission order. A project that queued a thousand files does not make the others wait for
   * all of them, nor take the workers another project's task could have. `only`: the projects
   * this process runs tasks of (several workers: those it owns); all when absent.
   */
  claimNext(after: string | null, running: ReadonlyMap<string, number> = new Map(), only?: ReadonlySet<string>): TaskRecord | null {
    return this.db.transaction(() => {
      const projects = only ? this.queuedProjects().filter((p) => only.has(p)) : this.queuedProjects();
      if (projects.length === 0) return null;
      const load = (p: string) => running.get(p) ?? 0;
      const fewest = Math.min(...projects.map(load));
      const candidates = projects.filter((p) => load(p) === fewest);
      const next = candidates.find((p) => p > (after ?? '')) ?? candidates[0]!;
      const row = this.sql(`SELECT * FROM ingest_tasks WHERE status = 'queued' AND project_id = ? ORDER BY rowid LIMIT 1`).get(next) as Row;
      // A compare-and-swap on the status: a task another process took meanwhile is not run twice.
      const claimed = this.sql(`UPDATE ingest_tasks SET status = 'running', started_at = ?, progress = NULL, result = NULL, error = NULL WHERE id = ? AND status = 'queued'`).run(nowIso(), row.id);
      return claimed.changes === 1 ? fromRow({ ...row, status: 'running' }) : null;
    }).immediate();
  }

  /** Moves the task from `from` to `to` (finished_at set for a finished status); false when it was not in `from`. */
  transition(id: string, from: TaskStatus | TaskStatus[], to: TaskStatus, fields: { error?: TaskError } = {}): boolean {
    const froms = Array.isArray(from) ? from : [from];
    const finished = to === 'succeeded' || to === 'failed' || to === 'cancelled' ? nowIso() : null;
    const info = this.sql(
      `UPDATE ingest_tasks SET status = ?, finished_at = ?, error = coalesce(?, error),
         started_at = CASE WHEN ? = 'queued' THEN NULL ELSE started_at END
       WHERE id = ? AND status IN (SELECT value FROM json_each(?))`,
    ).run(to, finished, fields.error ? JSON.stringify(fields.error) : null, to, id, JSON.stringify(froms));
    return info.changes === 1;
  }

  setProgress(id: string, progress: Progress): void {
    this.sql(`UPDATE ingest_tasks SET progress = ? WHERE id = ? AND status = 'running'`).run(JSON.stringify(progress), id);
  }

  /** A running task succeeded with `result`, both in one statement; false when it was no longer running. */
  succeed(id: string, result: TaskResult): boolean {
    return this.sql(`UPDATE ingest_tasks SET status = 'succeeded', finished_at = ?, result = ? WHERE id = ? AND status = 'running'`).run(nowIso(), JSON.stringify(result), id).changes === 1;
  }

  setResult(id: string, result: TaskResult): void {
    this.sql('UPDATE ingest_tasks SET result = ? WHERE id = ?').run(JSON.stringify(result), id);
  }

  /** After a restart: tasks that were running start again from the beginning (their output was never committed). */
  requeueRunning(): number {
    return this.sql(`UPDATE ingest_tasks SET status = 'queued', started_at = NULL, progress = NULL WHERE status = 'running'`).run().changes;
  }

  idsWithStatus(status: TaskStatus): Set<string> {
    return new Set((this.sql('SELECT id FROM ingest_tasks WHERE status = ?').all(status) as { id: string }[]).map((r) => r.id));
  }

  count(status: TaskStatus): number {
    return (this.sql('SELECT COUNT(*) AS n FROM ingest_tasks WHERE status = ?').get(status) as { n: number }).n;
  }
}
