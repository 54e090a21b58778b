import type { Db } from '../db/database.ts';
import type { Ownership } from './ownership.ts';
import { ProjectLeases } from './leases.ts';
import type { Member } from './messages.ts';
import { NotOwnerError } from './notOwner.ts';
import { rendezvous } from './rendezvous.ts';

export interface WorkerIdentity {
  name: string;
  holder: string;
  boxStart: boolean;
}

/** Where a change of a project runs: here, or on the live worker that holds its lease. */
export type OwnerRoute = { here: true } | { here: false; member: Member };

/**
 * Ownership of one worker among several (ownership.ts): the leases this incarnation holds, the
 * live members the primary announced, and the decision, for each change of a project, to run it
 * here (taking the lease when no live worker holds it) or to forward it to the holder.
 */
export class WorkerOwnership implements Ownership {
  readonly alone = false;
  readonly workerName: string;
  readonly boxStart: boolean;
  readonly leases: ProjectLeases;
  /** Project → the epoch of the lease this incarnation holds, and when it took it. */
  private readonly held = new Map<string, { epoch: number; since: number }>();
  private liveSet = new Map<string, Member>();
  private readonly listeners = new Set<(projectId: string) => void>();

  constructor(
    db: Db,
    private readonly me: WorkerIdentity,
    /** Tells the primary this worker took a lease (it routes the project's changes here). */
    private readonly announce: (projectId: string) => void,
  ) {
    this.workerName = me.name;
    this.boxStart = me.boxStart;
    this.leases = new ProjectLeases(db, me.holder);
  }

  /** The first slot runs the box's duties; a restarted w1 takes them up again. */
  get boxDuties(): boolean {
    return this.me.name === 'w1';
  }

  /** The primary's list of live workers (this one included). */
  setMembers(members: readonly Member[]): void {
    this.liveSet = new Map(members.map((m) => [m.holder, m]));
  }

  /** The live workers, each with the number of projects whose lease it holds. */
  members(): (Member & { projects: number })[] {
    const held = this.leases.heldByHolder();
    return [...this.liveSet.values()].sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true })).map((m) => ({ ...m, projects: held.get(m.holder) ?? 0 }));
  }

  holds(projectId: string): boolean {
    return this.held.has(projectId);
  }

  /**
   * When the lease was taken: it passes only from a holder the primary saw exit (and whose
   * process group it killed) or one that gave it back, so no earlier writer is left.
   */
  soleWriterSince(projectId: string): number | undefined {
    return this.held.get(projectId)?.since;
  }

  /** Decides where a change of the project runs; takes the lease when nobody alive holds it. */
  route(projectId: string): OwnerRoute {
    if (this.held.has(projectId)) return { here: true };
    const row = this.leases.read(projectId);
    const holder = row && this.liveSet.get(row.holder);
    if (holder && holder.holder !== this.me.holder) return { here: false, member: holder };
    return this.take(projectId) ? { here: true } : this.route(projectId);
  }

  adopt(projectId: string): boolean {
    if (this.held.has(projectId)) return true;
    const row = this.leases.read(projectId);
    if (row && this.liveSet.has(row.holder) && row.holder !== this.me.holder) return false;
    const choice = rendezvous(projectId, [...this.liveSet.values()].map((m) => m.name));
    return choice === this.me.name && this.take(projectId);
  }

  onAcquired(listener: (projectId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Inside a write transaction of the content core: this incarnation still holds the lease it took. */
  fence(projectId: string): void {
    const lease = this.held.get(projectId);
    if (lease === undefined) throw new NotOwnerError(projectId);
    this.leases.fence(projectId, lease.epoch);
  }

  /**
   * Box start, before any other worker runs: holds every project's lease while `work` recovers
   * them (commits a crash left unindexed are indexed under the fence like any write), then gives
   * them all back, so that projects are placed by the requests that come.
   */
  async recover<T>(projectIds: readonly string[], work: () => Promise<T>): Promise<T> {
    for (const id of projectIds) this.take(id, false);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** A clean stop: the leases go back to nobody. */
  release(): void {
    this.leases.releaseAll();
    this.held.clear();
  }

  private take(projectId: string, announce = true): boolean {
    const lease = this.leases.take(projectId, (holder) => this.liveSet.has(holder));
    if (lease.holder !== this.me.holder) return false;
    this.held.set(projectId, { epoch: lease.epoch, since: Date.now() });
    if (!announce) return true;
    this.announce(projectId);
    for (const l of this.listeners) queueMicrotask(() => l(projectId));
    return true;
  }
}
