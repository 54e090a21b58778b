/**
 * Which projects this process may write and which per-project background work it runs.
 *
 * One process (`--workers 1`) owns every project and runs every duty, exactly as before. Under
 * several workers (issue 29) a project has one owner at a time: the worker holding its lease
 * (leases.ts, with an epoch that fences a stale owner). Writes, MCP sessions, chat turns and the
 * project's background work (search indexer, webhooks queue, blame checkpoints, scheduled syncs,
 * ingestion tasks) run on the owner; reads run on any worker.
 */
export interface Ownership {
  /** True when this process is the only one (workers = 1): it owns everything. */
  readonly alone: boolean;
  /** This worker's name in logs and /healthz ('w1', 'w2', …); '' when alone. */
  readonly workerName: string;
  /**
   * True for the first worker of a box run, before any other worker starts: recovery that
   * assumes no other process is running (requeue tasks left running, mark interrupted runs,
   * clear the sandbox pool's leftovers, reconcile every repository) runs there only.
   */
  readonly boxStart: boolean;
  /** True for the one worker that runs box-wide duties (the WAL checkpointer, retention sweeps). */
  readonly boxDuties: boolean;
  /** Whether this process holds the project's lease now. */
  holds(projectId: string): boolean;
  /**
   * Background work asks before touching a project nobody may hold yet (a scheduled sync, a
   * queued ingestion task, a pending webhook delivery): true when this process holds the lease
   * or has just taken it because it is the project's placement choice among the live workers.
   */
  adopt(projectId: string): boolean;
  /** Called each time this process takes a project's lease, right after the take (the project's writer reconciles it before its next write). */
  onAcquired(listener: (projectId: string) => void): () => void;
  /**
   * Since when (epoch ms) this process is the only one that writes the project's repository, or
   * undefined when it does not hold it: every earlier writer is gone then (a worker whose lease
   * passed here was declared dead, its processes killed; an earlier run of the service), so a
   * lock one of them left is abandoned (mainRef.ts).
   */
  soleWriterSince(projectId: string): number | undefined;
  /** Throws unless this process holds the project's lease now; the content core runs it in each write transaction. */
  fence?(projectId: string): void;
  /** Several workers: the live workers of the box, as the primary last announced them, and how many projects each holds (health). */
  members?(): { name: string; pid: number; startedAt: string; restarts: number; projects: number }[];
}

/** When this process started (epoch ms): a process that owns every project writes them alone from then on. */
export const PROCESS_START = Math.floor(performance.timeOrigin);

/** The single process: everything is here. */
export const aloneOwnership: Ownership = {
  alone: true,
  workerName: '',
  boxStart: true,
  boxDuties: true,
  holds: () => true,
  soleWriterSince: () => PROCESS_START,
  adopt: () => true,
  onAcquired: () => () => {},
};
