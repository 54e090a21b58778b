import type { Logger } from 'pino';
import type { ChangeEntry } from '../types.ts';

export interface BlameWarmerDeps {
  /** The changes of a project's commits in (`after`, `upTo`]. */
  changesBetween(projectId: string, after: number, upTo: number): ChangeEntry[];
  /** Blames one version (the blamer keeps it as a checkpoint); throws for what cannot be blamed. */
  blame(projectId: string, nodeId: string, version: number): Promise<unknown>;
  every: number;
  logger?: Logger;
}

/** Jobs waiting at most; beyond, a checkpoint is made when its version is first blamed instead. */
const MAX_QUEUED = 1000;
const TEXT_TYPES = new Set(['markdown', 'json', 'file']);

/**
 * Makes blame checkpoints as versions are written: when a text node reaches a multiple of
 * `every` versions, its blame is computed in the background (child processes of git, one job at
 * a time), so that blaming any later version costs at most `every` versions' diffs, the first
 * time too. Fed the change bus's commit events; a commit missed (a restart between two events)
 * only means that checkpoint is made the first time its version is blamed.
 */
export class BlameWarmer {
  private readonly seen = new Map<string, number>();
  /** Projects whose new commits wait to be looked at (on a later turn: not on the write path). */
  private readonly reached = new Map<string, number>();
  private scanScheduled = false;
  private readonly queue: { projectId: string; nodeId: string; version: number }[] = [];
  private running = false;

  constructor(private readonly d: BlameWarmerDeps) {}

  /** The project's `main` reached project version `seq` (called on the write path: only noted here). */
  committed(projectId: string, seq: number): void {
    if (this.d.every <= 0) return;
    this.reached.set(projectId, Math.max(seq, this.reached.get(projectId) ?? 0));
    if (this.scanScheduled) return;
    this.scanScheduled = true;
    setImmediate(() => this.scan());
  }

  /** Jobs not yet done (tests wait for none). */
  get pending(): number {
    return this.reached.size + this.queue.length + (this.running ? 1 : 0);
  }

  /** The versions the noted commits made that are checkpoints: queued. */
  private scan(): void {
    this.scanScheduled = false;
    const reached = [...this.reached];
    this.reached.clear();
    for (const [projectId, seq] of reached) {
      const after = this.seen.get(projectId) ?? seq - 1;
      this.seen.set(projectId, seq);
      if (seq <= after) continue;
      try {
        for (const e of this.d.changesBetween(projectId, after, seq)) {
          if (e.version % this.d.every !== 0 || !TEXT_TYPES.has(e.nodeType) || /delete|trash|purge/.test(e.action)) continue;
          if (this.queue.length >= MAX_QUEUED) break;
          this.queue.push({ projectId, nodeId: e.nodeId, version: e.version });
        }
      } catch (e) {
        // A project deleted meanwhile: nothing to keep.
        this.d.logger?.debug({ err: e, projectId }, 'no blame checkpoints looked for');
      }
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) {
        try {
          await this.d.blame(job.projectId, job.nodeId, job.version);
        } catch (e) {
          // Binary, too large, deleted meanwhile: nothing to keep.
          this.d.logger?.debug({ err: e, ...job }, 'no blame checkpoint');
        }
      }
    } finally {
      this.running = false;
    }
  }
}
