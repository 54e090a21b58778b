import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Ingestion's temporary files, under the data folder's own `tmp/ingest/` (the data folder is
 * private, and a rename from an upload to its task stays on one file system):
 * - `uploads/<random>/`: a multipart request being read; removed when the request ends. Under
 *   several workers each has its own `uploads/<worker>/`, which it alone clears when it starts.
 * - `tasks/<task id>/`: what a task works on (its uploaded file, the pages it fetched);
 *   removed when the task ends, whatever the outcome, and at start-up for tasks no longer queued.
 */
export class IngestTemp {
  readonly root: string;
  /** This process's folder of multipart requests being read. */
  private readonly uploads: string;

  /** `worker`: this worker's name under several workers ('' for the one process). */
  constructor(dataDir: string, worker = '') {
    this.root = join(dataDir, 'tmp', 'ingest');
    this.uploads = worker ? join(this.root, 'uploads', worker) : join(this.root, 'uploads');
  }

  /** A fresh folder for one multipart request. */
  async uploadDir(): Promise<string> {
    mkdirSync(this.uploads, { recursive: true, mode: 0o700 });
    return mkdtemp(join(this.uploads, 'u-'));
  }

  taskDir(taskId: string): string {
    return join(this.root, 'tasks', taskId);
  }

  /** Creates (if needed) and returns the task's folder. */
  ensureTaskDir(taskId: string): string {
    const dir = this.taskDir(taskId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  async removeTask(taskId: string): Promise<void> {
    await rm(this.taskDir(taskId), { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
  }

  /** Start-up of a worker among others: no request of this worker is being read (the others' are left alone). */
  sweepOwnUploads(): void {
    rmSync(this.uploads, { recursive: true, force: true });
  }

  /** Start-up of the box: no request is being read. */
  sweepUploads(): void {
    rmSync(join(this.root, 'uploads'), { recursive: true, force: true });
  }

  /** Start-up of the box, once tasks left running are recovered: only queued tasks still need their files. */
  sweepTasks(queued: Set<string>): void {
    let names: string[] = [];
    try {
      names = readdirSync(join(this.root, 'tasks'));
    } catch {
      return;
    }
    for (const name of names) if (!queued.has(name)) rmSync(join(this.root, 'tasks', name), { recursive: true, force: true });
  }
}
