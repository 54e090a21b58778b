import { join } from 'node:path';
import type { ContentStore } from '../../content/contentStore.ts';
import { joinPath } from '../../content/paths.ts';
import type { WriteTimeGrants } from '../../policies/writeTimeGrant.ts';
import type { Progress } from '../converters/converter.ts';
import { safeName } from '../converters/names.ts';
import { runUrlTask, type UrlTaskDeps } from '../url/urlTask.ts';
import { commitNodes, plannedAt, type PlannedNode } from './resultWriter.ts';
import type { SourceConverter } from './sourceConverter.ts';
import { TaskFailure } from './taskFailure.ts';
import type { FileInput, ResultNode, TaskRecord, TaskResult } from './taskTypes.ts';
import type { IngestTemp } from './tempFiles.ts';

export interface TaskRunnerDeps {
  content: ContentStore;
  /** The task's status as stored, read right before its commit (a cancel made by another process). */
  status: (taskId: string) => Promise<TaskRecord['status'] | null>;
  /** The policy asked again with the submitter as it stands now (src/policies/writeTimeGrant.ts). */
  grants: Pick<WriteTimeGrants, 'require'>;
  converter: SourceConverter;
  temp: IngestTemp;
  url: Omit<UrlTaskDeps, 'converter'>;
}

/** What the queue hands a running task: aborted when it is cancelled, preempted or the service stops. */
export interface RunControl {
  signal: AbortSignal;
  progress(p: Progress): void;
}

/** The trailer line of a task's commit: how a restart finds out that the task's content is written. */
export const taskTrailer = (taskId: string): string => `Cns-Ingest-Task: ${taskId}`;

/** The warning a result read back from its commit carries (what the commit does not hold). */
export const RECOVERED_WARNING =
  'the service stopped after this task was written: its result was read from its commit (nodes already as converted, and the conversion warnings, are not listed)';

/**
 * What one task does, from its input to its commit: convert (the uploaded file, or the pages of
 * a URL), then write every node as ONE commit by the submitter with the message `ingest
 * <source>`, its trailer naming the task. The submitter is authorized again when the task starts
 * and right before the commit (CommitOptions.check), for every path it writes (a key revoked or narrowed, a member removed
 * or lowered while the task waited or ran writes nothing); a task aborted (cancelled) by then
 * writes nothing either. Its success is recorded by the queue after the commit.
 */
export class TaskRunner {
  constructor(private readonly d: TaskRunnerDeps) {}

  async execute(task: TaskRecord, run: RunControl): Promise<TaskResult> {
    await this.authorize(task, [task.target_path]);
    const dir = this.d.temp.ensureTaskDir(task.id);
    const { nodes, warnings } =
      task.kind === 'file'
        ? await this.fileTask(task, dir, run)
        : await runUrlTask({ ...this.d.url, converter: this.d.converter }, task, { dir, signal: run.signal, progress: run.progress });
    if (nodes.length === 0) throw new TaskFailure('nothing_converted', 'no page could be fetched and converted', { warnings });
    const written = await commitNodes(this.d.content, {
      projectId: task.project_id,
      actor: task.actor,
      folder: task.target_path,
      nodes,
      message: `ingest ${task.source}`,
      signal: run.signal,
      trailers: [taskTrailer(task.id)],
      beforeCommit: async () => {
        if ((await this.d.status(task.id)) !== 'running') throw new TaskFailure('cancelled', 'the task was cancelled');
      },
      check: async () => {
        await this.authorize(task, [task.target_path, ...nodes.map((n) => n.path)]);
        // Cancelled (or stopped) up to the last moment: nothing is written.
        run.signal.throwIfAborted();
      },
    });
    return { nodes: written.nodes, warnings, project_version: written.projectVersion };
  }

  /**
   * The result of a task left running by a stop, read from its commit in the project's history
   * (its trailer names the task); null when it made none. The commit holds the nodes it changed.
   */
  async committed(task: TaskRecord): Promise<TaskResult | null> {
    if (!task.started_at) return null;
    const found = await this.d.content.findTrailer(task.project_id, taskTrailer(task.id), Date.parse(task.started_at));
    if (!found) return null;
    const nodes = found.changes
      .filter((c) => c.type !== 'folder' && c.op !== 'delete')
      .map((c) => ({ path: c.path, node_id: c.id, version: c.version ?? 0, type: c.type as ResultNode['type'] }));
    return { nodes, warnings: [RECOVERED_WARNING], project_version: found.projectVersion };
  }

  private async fileTask(task: TaskRecord, dir: string, run: RunControl): Promise<{ nodes: PlannedNode[]; warnings: string[] }> {
    const input = task.input as FileInput;
    const file = join(dir, input.file);
    const out = await this.d.converter.convert(task, { file, name: task.source, mimeType: input.mime_type }, run.signal, run.progress);
    const nodes = out.nodes.map((n) => plannedAt(n, joinPath(task.target_path, n.name)));
    const warnings = [...out.warnings];
    if (task.keep_original) {
      const path = joinPath(task.target_path, safeName(task.source));
      const same = nodes.find((n) => n.path === path);
      if (!same) nodes.push({ path, type: 'file', file });
      else if (same.type !== 'file') warnings.push(`the original would have the name of the result (${path}): only the result was written`);
    }
    return { nodes, warnings };
  }

  /** The submitter as it stands now may still write `paths`; else the task fails 'forbidden' (or the policy's 'not_found'). */
  private async authorize(task: TaskRecord, paths: string[]): Promise<void> {
    try {
      await this.d.grants.require({ kind: task.actor.type === 'user' ? 'user' : 'key', id: task.created_by }, task.project_id, paths);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === 'UNAUTHORIZED') throw new TaskFailure('forbidden', 'the user or key that submitted this task no longer exists or was revoked');
      throw new TaskFailure(typeof code === 'string' ? code.toLowerCase() : 'forbidden', `the submitter may no longer write ${task.target_path || 'the project'}: ${(e as Error).message}`);
    }
  }
}
