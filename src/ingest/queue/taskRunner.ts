import { join } from 'node:path';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import { joinPath } from '../../content/paths.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';
import type { Progress } from '../converters/converter.ts';
import { safeName } from '../converters/names.ts';
import { runUrlTask, type UrlTaskDeps } from '../url/urlTask.ts';
import { commitNodes, plannedAt, type PlannedNode } from './resultWriter.ts';
import type { SourceConverter } from './sourceConverter.ts';
import { TaskFailure } from './taskFailure.ts';
import type { FileInput, TaskRecord, TaskResult } from './taskTypes.ts';
import type { IngestTemp } from './tempFiles.ts';

export interface TaskRunnerDeps {
  content: ContentStore;
  access: ContentAccess;
  authenticator: Pick<Authenticator, 'current'>;
  converter: SourceConverter;
  temp: IngestTemp;
  url: Omit<UrlTaskDeps, 'converter'>;
}

/** What the queue hands a running task. */
export interface RunControl {
  signal: AbortSignal;
  progress(p: Progress): void;
  /** Inside the commit's write section: throws when the task may no longer be written (cancelled meanwhile), and marks it succeeded otherwise. */
  claimSuccess(): void;
}

/**
 * What one task does, from its input to its commit: convert (the uploaded file, or the pages of
 * a URL), then write every node as ONE commit by the submitter with the message `ingest
 * <source>`. The submitter is authorized again when the task starts and inside the commit (a
 * key revoked or a member removed while the task waited writes nothing).
 */
export class TaskRunner {
  constructor(private readonly d: TaskRunnerDeps) {}

  async execute(task: TaskRecord, run: RunControl): Promise<TaskResult> {
    this.authorize(task);
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
      guard: () => {
        this.authorize(task);
        run.claimSuccess();
      },
    });
    return { nodes: written.nodes, warnings, project_version: written.projectVersion };
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

  /** The submitter as it stands now may still write the target folder; else the task fails 'forbidden' (or 'not_found'). */
  private authorize(task: TaskRecord): void {
    const principal = this.d.authenticator.current({ kind: task.actor.type === 'user' ? 'user' : 'key', id: task.created_by });
    if (!principal) throw new TaskFailure('forbidden', 'the user or key that submitted this task no longer exists or was revoked');
    try {
      this.d.access.grantPaths(principal, task.project_id, 'content:write', [task.target_path]);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      throw new TaskFailure(typeof code === 'string' ? code.toLowerCase() : 'forbidden', `the submitter may no longer write ${task.target_path || 'the project'}: ${(e as Error).message}`);
    }
  }
}
