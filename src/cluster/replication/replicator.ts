import type { Logger } from '../../logging/logger.ts';
import { DomainError } from '../../errors/domainError.ts';
import { readRef } from '../../content/git/refs.ts';
import { spawnGit, storeGitEnv } from '../../content/git/gitCli.ts';
import type { Repo } from '../../content/git/repo.ts';
import type { ApplyOutcome } from './applyShipment.ts';
import { objectsBetween } from './objectsBetween.ts';
import type { RefMove, Shipment, ShippedObject } from './shipment.ts';

export const REPLICATED_REFS = ['refs/heads/main', 'refs/notes/cns'] as const;
export type Tips = Record<string, string | null>;

/** How the primary reaches a replica (HTTP between nodes; a direct call in tests). A failure to reach it throws. */
export interface ReplicaClient {
  ship(node: string, shipment: Shipment): Promise<ApplyOutcome>;
  /** Asks the replica to fetch the project from this primary with git (a step that cannot be shipped, or a copy that is behind or diverged); answers its tips afterwards. */
  catchUp(node: string, project: string, epoch: number): Promise<Tips>;
}

/** Where a project's copies are, as the placement says at this moment. */
export interface CopySet {
  epoch: number;
  replicas: readonly string[];
  /** Copies that must hold a step before it is acknowledged, this one included (⌊R/2⌋+1). */
  quorum: number;
}

/** The primary learned that a newer epoch exists: it is no longer the primary and must not acknowledge. */
export class DeposedError extends DomainError {
  constructor(project: string, epoch: number) {
    super('SERVICE_UNAVAILABLE', 'This node is no longer the project’s primary; retry the request.', { reason: 'DEPOSED', project, epoch }, { 'retry-after': '1' });
  }
}

/**
 * The primary's half of replication before acknowledgement (docs/design/cluster.md §5): each step
 * of a project (its refs moved from old to new tips) is shipped to every replica in parallel, and
 * the step is acknowledged once a quorum of copies, this one included, holds it. Replicas that
 * are slower go on in the background. Per replica, sends are one at a time, each from the tips the
 * replica last confirmed to the newest, so a replica that missed steps gets them in one shipment,
 * and one that is behind beyond what a shipment carries fetches with git.
 */
export class Replicator {
  /** Per project and replica, the tips the replica last confirmed (absent: unknown). */
  private readonly confirmed = new Map<string, Tips>();
  /** Per project and replica, the send in flight and the calls waiting for it or the next. */
  private readonly links = new Map<string, Link>();
  private calls = 0;

  constructor(
    private readonly client: ReplicaClient,
    private readonly o: { timeoutMs: number; logger?: Logger; /** Steps of more objects go by fetch (tests lower it). */ shipMaxObjects?: number },
  ) {}

  /**
   * Resolves once a quorum holds the repository's current tips; throws SERVICE_UNAVAILABLE
   * (REPLICATION_UNAVAILABLE) when no quorum answered within the timeout (the write may have been
   * saved; it is not confirmed), or DeposedError when a replica knows a newer epoch.
   */
  async replicate(project: string, repo: Repo, copies: CopySet, previous: Tips): Promise<void> {
    const target: Tips = {};
    for (const r of REPLICATED_REFS) target[r] = readRef(repo.gitdir, r);
    const needed = copies.quorum - 1;
    if (needed <= 0) {
      for (const node of copies.replicas) void this.sendTo(project, repo, node, copies.epoch, target, previous).catch(() => undefined);
      return;
    }
    let deposed: DeposedError | null = null;
    await new Promise<void>((resolve, reject) => {
      let held = 0;
      let settled = 0;
      let done = false;
      const timer = setTimeout(() => finish(unavailable(project, held + 1, copies.quorum)), this.o.timeoutMs);
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      for (const node of copies.replicas) {
        this.sendTo(project, repo, node, copies.epoch, target, previous).then(
          (ok) => {
            settled++;
            if (ok) held++;
            if (held >= needed) finish();
            else if (settled === copies.replicas.length) finish(deposed ?? unavailable(project, held + 1, copies.quorum));
          },
          (err: unknown) => {
            settled++;
            if (err instanceof DeposedError) {
              deposed = err;
              finish(err);
            } else if (settled === copies.replicas.length) finish(unavailable(project, held + 1, copies.quorum));
          },
        );
      }
      if (copies.replicas.length < needed) finish(unavailable(project, 1, copies.quorum));
    });
  }

  /**
   * Brings one copy to the repository's current tips: from what it last confirmed, or with
   * `fresh` (a move's new copy) from nothing it is assumed to hold, which is a shipment of the
   * whole history when it is small and a fetch otherwise. True once the copy confirmed them;
   * false when it could not be reached or refused.
   */
  syncCopy(project: string, repo: Repo, node: string, epoch: number, fresh = true): Promise<boolean> {
    if (fresh) this.forget(project, node);
    const target: Tips = {};
    for (const r of REPLICATED_REFS) target[r] = readRef(repo.gitdir, r);
    return this.sendTo(project, repo, node, epoch, target, {});
  }

  /** What the primary believes a replica holds (health, tests). */
  confirmedTips(project: string, node: string): Tips | undefined {
    return this.confirmed.get(`${project}\0${node}`);
  }

  /** A replica's copy was replaced or the project deleted: nothing is known of it any more. */
  forget(project: string, node?: string): void {
    for (const key of [...this.confirmed.keys()]) if (key.startsWith(`${project}\0`) && (node === undefined || key.endsWith(`\0${node}`))) this.confirmed.delete(key);
  }

  /**
   * True once the replica holds the repository's tips as they were when this was called (or newer);
   * false when it could not be reached or refused. One send at a time per replica, covering every
   * call made before it started: a slow or unreachable replica costs one send in flight, not one per write.
   */
  private sendTo(project: string, repo: Repo, node: string, epoch: number, target: Tips, previous: Tips): Promise<boolean> {
    const key = `${project}\0${node}`;
    if (sameTips(this.confirmed.get(key), target)) return Promise.resolve(true);
    let link = this.links.get(key);
    if (!link) this.links.set(key, (link = { running: false, waiters: [], repo, epoch, previous }));
    Object.assign(link, { repo, epoch, previous });
    const seq = ++this.calls;
    const answer = new Promise<boolean>((resolve, reject) => link.waiters.push({ seq, resolve, reject }));
    if (!link.running) void this.pump(project, node, key, link);
    return answer;
  }

  private async pump(project: string, node: string, key: string, link: Link): Promise<void> {
    link.running = true;
    try {
      while (link.waiters.length > 0) {
        // Every call so far committed its step before it called: the tips read by this send include them all.
        const upTo = this.calls;
        let ok = false;
        let error: unknown = null;
        try {
          ok = await this.bringUp(project, link.repo, node, link.epoch, key, link.previous);
        } catch (e) {
          error = e;
        }
        const done = link.waiters.filter((w) => w.seq <= upTo);
        link.waiters = link.waiters.filter((w) => w.seq > upTo);
        for (const w of done) {
          if (error) w.reject(error);
          else w.resolve(ok);
        }
      }
    } finally {
      link.running = false;
      if (link.waiters.length === 0) this.links.delete(key);
    }
  }

  /** Ships from what the replica confirmed (or is believed to hold) to the repository's newest tips. */
  private async bringUp(project: string, repo: Repo, node: string, epoch: number, key: string, previous: Tips): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const now: Tips = {};
      for (const r of REPLICATED_REFS) now[r] = readRef(repo.gitdir, r);
      // Unknown (a first send, or after a failure): assume it holds the step's start; it says otherwise if not.
      const from = this.confirmed.get(key) ?? previous;
      const shipment = await this.shipmentOf(project, repo, epoch, from, now);
      if (shipment === null) return this.fetchBy(project, repo, node, epoch, key, now);
      let answer: ApplyOutcome;
      try {
        answer = shipment.refs.length === 0 ? { ok: true } : await this.client.ship(node, shipment);
      } catch (err) {
        this.confirmed.delete(key);
        this.o.logger?.warn({ err, project, node }, 'a replica did not take a shipment');
        return false;
      }
      if (answer.ok) {
        this.confirmed.set(key, now);
        return true;
      }
      if (answer.reason === 'stale-epoch') throw new DeposedError(project, answer.epoch);
      if (answer.reason === 'incomplete') return this.fetchBy(project, repo, node, epoch, key, now);
      this.confirmed.set(key, answer.tips); // moved: ship again from what it has
    }
    return this.fetchBy(project, repo, node, epoch, key, null);
  }

  /** The shipment from `from` to `to`, or null when a ref's step cannot be shipped. */
  private async shipmentOf(project: string, repo: Repo, epoch: number, from: Tips, to: Tips): Promise<Shipment | null> {
    const refs: RefMove[] = [];
    const objects: ShippedObject[] = [];
    for (const name of REPLICATED_REFS) {
      const next = to[name] ?? null;
      const old = from[name] ?? null;
      if (next === null || old === next) continue;
      const more = await objectsBetween(repo, old, next, this.o.shipMaxObjects);
      if (more === null) return null;
      refs.push({ name, old, next });
      objects.push(...more);
    }
    return { project, epoch, refs, objects };
  }

  private async fetchBy(project: string, repo: Repo, node: string, epoch: number, key: string, target: Tips | null): Promise<boolean> {
    try {
      const tips = await this.client.catchUp(node, project, epoch);
      this.confirmed.set(key, tips);
      // Writes go on during a long fetch: the copy then holds newer tips than the target, which is enough.
      return target === null || sameTips(tips, target) || (await contains(repo, tips, target));
    } catch (err) {
      if (err instanceof DeposedError) throw err;
      this.confirmed.delete(key);
      this.o.logger?.warn({ err, project, node }, 'a replica could not catch up');
      return false;
    }
  }
}

interface Link {
  running: boolean;
  waiters: { seq: number; resolve: (ok: boolean) => void; reject: (err: unknown) => void }[];
  repo: Repo;
  epoch: number;
  previous: Tips;
}

/** Whether each of `tips` is `target`'s tip or a descendant of it, in this repository (false when it lacks a tip's objects). */
async function contains(repo: Repo, tips: Tips, target: Tips): Promise<boolean> {
  for (const r of REPLICATED_REFS) {
    const want = target[r] ?? null;
    const have = tips[r] ?? null;
    if (want === null || want === have) continue;
    if (have === null) return false;
    const { code } = await spawnGit('git', repo.gitdir, ['merge-base', '--is-ancestor', want, have], { env: storeGitEnv(), okCodes: [1, 128] });
    if (code !== 0) return false;
  }
  return true;
}

function sameTips(a: Tips | undefined, b: Tips): boolean {
  return a !== undefined && REPLICATED_REFS.every((r) => (a[r] ?? null) === (b[r] ?? null));
}

function unavailable(project: string, held: number, quorum: number): DomainError {
  return new DomainError('SERVICE_UNAVAILABLE', `The write was saved on this node but not confirmed in time: ${held} of the ${quorum} copies it needs hold it. It is kept unless this node fails before the others catch up; check, then retry if it is missing.`, { reason: 'REPLICATION_UNAVAILABLE', project }, { 'retry-after': '1' });
}
