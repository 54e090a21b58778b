import type { Logger } from '../../logging/logger.ts';
import type { ClusterSettings } from '../../config/clusterSettings.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { Repo } from '../../content/git/repo.ts';
import type { RefTips } from '../../content/writer/projectWriter.ts';
import type { MetadataDb } from '../../db/metadata/metadataStore.ts';
import type { ProjectRepositories } from '../../domain/projects/projectRepository.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { ClusterMembership, ClusterNodeView } from '../membership.ts';
import { rendezvousRank } from '../rendezvous.ts';
import { Ticker } from '../ticker.ts';
import { readCopyState, tipEpochOf, writeCopyState } from '../replication/copyState.ts';
import { ReplicaService } from '../replication/replicaService.ts';
import { DeposedError, Replicator } from '../replication/replicator.ts';
import { clusterKey, signedHeaders } from './nodeSignature.ts';
import { PlacementStore, type Placement } from './placementStore.ts';
import { DROP_COPY_PATH, PROMOTE_PATH, ReplicaHttpClient, SEAL_PATH, callNode } from './replicaHttpClient.ts';
import { ProjectMoves } from './projectMove.ts';
import { NodeDrains } from './nodeDrain.ts';

/** A placement read this recently is used as it is: a failover is seen at most this late (and a write meeting it answers 503, retried). */
const PLACEMENT_TTL_MS = 1_000;
/** Projects a coordinator fails over at once. */
const FAILOVER_BATCH = 8;
/** How long a request waits for an election (a planned switchover takes well under this) before it is answered 503. */
const ELECTION_WAIT_MS = 1_000;
const ELECTION_POLL_MS = 20;

/** The project is written by another node: nothing was changed here. */
export class NotPrimaryError extends DomainError {
  constructor(project: string) {
    super('SERVICE_UNAVAILABLE', 'Another node of the cluster writes this project now; nothing was changed. Retry the request.', { reason: 'NOT_PRIMARY', project }, { 'retry-after': '1' });
  }
}

/** What a sealed copy reports to the coordinator choosing the next primary. */
export interface SealReport {
  /** The epoch the copy's `main` was written under: compared first. */
  tipEpoch: number;
  version: number;
  commit: string | null;
}

/**
 * This process as a node of a cluster (issue 31, docs/design/cluster.md): where each project lives
 * (its placement in PostgreSQL, claimed by the node that first serves it, copies on the best-ranked
 * live nodes), the primary's replication before acknowledgement, the replica's side, and, on the
 * node holding the coordinator lease, failover of the projects whose primary is down.
 */
export class ClusterNode {
  readonly me: string;
  readonly key: Buffer;
  readonly placements: PlacementStore;
  readonly replicator: Replicator;
  private replicas: ReplicaService | null = null;
  private content: ContentStore | null = null;
  private nodes = new Map<string, ClusterNodeView>();
  private readonly cache = new Map<string, { p: Placement; at: number }>();
  /** Per project, bumped by forget(): a placement read that started before is not cached (it may predate a move). */
  private readonly generations = new Map<string, number>();
  /** Projects being deleted here: the other nodes whose copies go once the project's row is gone. */
  private readonly deleting = new Map<string, { epoch: number; others: string[] }>();
  /** Projects this node hands over to another primary right now: requests routed here wait for the new primary. */
  private readonly handoffs = new Map<string, Promise<void>>();
  private readonly elections = new Map<string, Promise<Placement | null>>();
  /** Projects whose copy left this node while it runs: shipments are refused unless the placement names it again. */
  private readonly dropped = new Set<string>();
  private announcer: (project: string) => void = () => {};
  private readonly ticker: Ticker;
  /** Moves of copies and drains of nodes (projectMove.ts, nodeDrain.ts). */
  readonly moves: ProjectMoves;
  readonly drains: NodeDrains;

  constructor(
    private readonly d: {
      settings: ClusterSettings;
      db: MetadataDb;
      membership: ClusterMembership;
      signingSecret: Uint8Array;
      logger: Logger;
      /** How long a write waits for a quorum before answering 503. */
      replicationTimeoutMs: number;
    },
  ) {
    this.me = d.settings.nodeId;
    this.key = clusterKey(d.signingSecret);
    this.placements = new PlacementStore(d.db);
    this.ticker = new Ticker(d.settings.heartbeatMs, () => this.tick());
    this.replicator = new Replicator(new ReplicaHttpClient({ key: this.key, me: this.me, urlOf: (n) => this.urlOf(n) }), { timeoutMs: d.replicationTimeoutMs, logger: d.logger });
    this.moves = new ProjectMoves(this, { db: d.db, logger: d.logger });
    this.drains = new NodeDrains(this, { db: d.db, logger: d.logger });
  }

  /** How long a member may miss heartbeats before it is down (CNS_CLUSTER_DOWN_AFTER_MS). */
  get downAfterMs(): number {
    return this.d.settings.downAfterMs;
  }

  /**
   * A write is acknowledged once this many of the project's `copies` hold it, the primary's
   * included: a majority of R, or of the copies while a move holds one more (a majority of R+1
   * meets every majority of R and of R+1, so a move never splits the quorums).
   */
  quorumOf(copies: number): number {
    return Math.floor(Math.max(copies, this.d.settings.replicas) / 2) + 1;
  }

  /** The content store this node's copies live in (set once, when the services are built). */
  attach(content: ContentStore): void {
    this.content = content;
    this.replicas = new ReplicaService(
      content,
      (project) => this.sourceOf(project),
      (project) => this.admit(project),
    );
  }

  get store(): ContentStore {
    if (!this.content) throw new Error('the cluster node has no content store yet');
    return this.content;
  }

  get settings(): ClusterSettings {
    return this.d.settings;
  }

  get logger(): Logger {
    return this.d.logger;
  }

  get incarnation(): string | null {
    return this.d.membership.incarnation;
  }

  /** How this node tells every node that a project's placement changed (the bus's `placement-changed`). */
  announceWith(fn: (project: string) => void): void {
    this.announcer = fn;
  }

  /** Every node drops what it cached of the project's placement, this one first. */
  announce(project: string): void {
    this.forget(project);
    this.announcer(project);
  }

  /** While `work` runs, requests for the project routed here wait for it (a switchover this node makes). */
  async holdingRequests<T>(project: string, work: () => Promise<T>): Promise<T> {
    let done!: () => void;
    this.handoffs.set(project, new Promise<void>((r) => (done = r)));
    try {
      return await work();
    } finally {
      this.handoffs.delete(project);
      done();
    }
  }

  /** This node's copy of the project left (a move): it takes no shipment for it until the placement names this node again. */
  markDropped(project: string): void {
    this.dropped.add(project);
  }

  private async admit(project: string): Promise<void> {
    if (!this.dropped.has(project)) return;
    const p = await this.placements.get(project);
    if (!p?.copies.includes(this.me)) throw new DomainError('CONFLICT', 'This node holds no copy of the project any more.', { reason: 'NOT_A_COPY', project });
    // Moved back here: the copy starts again from an empty repository.
    this.dropped.delete(project);
    await this.store.createProject(project);
  }

  get replicaService(): ReplicaService {
    if (!this.replicas) throw new Error('the cluster node has no content store yet');
    return this.replicas;
  }

  /** Reads the members, then keeps them (and, as coordinator, the failovers) current every heartbeat. */
  async start(): Promise<void> {
    await this.refreshNodes();
    await this.claimLocalProjects();
    this.ticker.start();
  }

  /**
   * A box that joins a cluster with projects of its own (written before it was a node) is their
   * primary: each one with history here and no placement yet is placed here, at epoch 1.
   */
  private async claimLocalProjects(): Promise<void> {
    for (const project of this.content?.listProjects() ?? []) {
      const placed = await this.placements.get(project);
      // A copy moved away (or replaced) while this node was stopped: it lives on elsewhere.
      if (placed && !placed.copies.includes(this.me) && placed.primary !== this.me) {
        this.markDropped(project);
        await this.content!.dropCopy(project);
        this.d.logger.info({ project }, 'cluster: a copy this node no longer holds was removed');
        continue;
      }
      // The project was deleted while this node was away (or its drop did not reach it).
      if (!placed && !(await this.placements.exists(project))) {
        this.markDropped(project);
        await this.content!.dropCopy(project);
        this.d.logger.info({ project }, 'cluster: the copy of a deleted project was removed');
        continue;
      }
      if (!this.content!.head(project)) continue;
      if (placed) continue;
      const p = await this.placementOf(project, true);
      if (p?.primary === this.me) await this.promote(project, p.epoch);
    }
  }

  async close(): Promise<void> {
    await this.ticker.stop();
    await this.drains.stop();
  }

  urlOf(node: string): string | null {
    return this.nodes.get(node)?.url ?? null;
  }

  /** Members that take copies: up, and neither draining nor drained. */
  liveNodes(): string[] {
    return [...this.nodes.values()].filter((n) => n.state === 'up').map((n) => n.id);
  }

  /** Members not known to be down (draining and drained ones still answer). */
  aliveNodes(): string[] {
    return [...this.nodes.values()].filter((n) => n.state !== 'down').map((n) => n.id);
  }

  /** The members as last read (every heartbeat). */
  members(): ClusterNodeView[] {
    return [...this.nodes.values()];
  }

  /**
   * The project's placement (cached for a second), placed here when nobody placed it yet: the
   * node that first serves a project (its creation) is its primary, and its copies go to the best
   * ranked live nodes. Null when the project does not exist. With `hold` (routing), a request
   * meeting an election (a planned switchover) waits for its new primary, up to a second.
   */
  async placementOf(project: string, fresh = false, claim = true, hold = true): Promise<Placement | null> {
    if (hold) await this.handoffs.get(project);
    const hit = this.cache.get(project);
    let p: Placement | null;
    if (hit && !fresh && performance.now() - hit.at < PLACEMENT_TTL_MS) p = hit.p;
    else {
      const generation = this.generations.get(project) ?? 0;
      p = await this.placements.get(project);
      if (!p && claim) {
        const others = rendezvousRank(project, this.liveNodes().filter((n) => n !== this.me), this.d.settings.replicas - 1);
        p = await this.placements.claim(project, this.me, [this.me, ...others]);
      }
      if ((this.generations.get(project) ?? 0) === generation) {
        if (p) this.cache.set(project, { p, at: performance.now() });
        else this.cache.delete(project);
      }
    }
    return hold && p?.state === 'electing' ? this.elected(project) : p;
  }

  /** The placement once its election ended (one poll per project, shared), or as it is after ELECTION_WAIT_MS. */
  private elected(project: string): Promise<Placement | null> {
    let waiting = this.elections.get(project);
    if (!waiting) {
      waiting = (async () => {
        const end = performance.now() + ELECTION_WAIT_MS;
        for (;;) {
          const p = await this.placements.get(project);
          if (!p || p.state === 'ok' || performance.now() > end) {
            if (p) this.cache.set(project, { p, at: performance.now() });
            return p;
          }
          await new Promise((r) => setTimeout(r, ELECTION_POLL_MS));
        }
      })().finally(() => this.elections.delete(project));
      this.elections.set(project, waiting);
    }
    return waiting;
  }

  /**
   * Project lifecycle on a node: a new project is placed on the node creating it (its primary)
   * before its repository exists. Deleting removes this node's copy, then, once the project's row
   * (and its placement rows with it) is gone, every other copy (dropCopy: a node refuses to drop a
   * copy its placement still lists). A node that was away drops its copy at its next start.
   */
  repositoriesOver(content: ProjectRepositories): ProjectRepositories {
    return {
      createProject: async (projectId) => {
        const p = await this.placementOf(projectId, true);
        await content.createProject(projectId);
        // The primary's copy knows it writes under its epoch (a failover compares the epochs copies were written under).
        if (p?.primary === this.me) await this.promote(projectId, p.epoch);
      },
      deleteProject: async (projectId) => {
        const p = await this.placements.get(projectId);
        if (p) this.deleting.set(projectId, { epoch: p.epoch, others: p.copies.filter((n) => n !== this.me) });
        this.forget(projectId);
        await content.deleteProject(projectId);
      },
      deleted: async (projectId) => {
        const d = this.deleting.get(projectId);
        this.deleting.delete(projectId);
        if (!d) return;
        await Promise.all(
          d.others.map((n) =>
            this.call(n, DROP_COPY_PATH, { project: projectId, epoch: d.epoch }).catch((err: unknown) => {
              this.d.logger.warn({ err: { message: (err as Error).message }, project: projectId, node: n }, 'cluster: a deleted project’s copy stays on a node until it starts again');
            }),
          ),
        );
      },
    };
  }

  /** From the cache only (background work asks many times a second): whether this node writes the project; a miss loads it for next time. */
  isPrimarySync(project: string): boolean {
    const hit = this.cache.get(project);
    // Never claims: background work on any node must not place a project where its data is not.
    if (!hit || performance.now() - hit.at >= PLACEMENT_TTL_MS) void this.placementOf(project, false, false).catch(() => undefined);
    return hit?.p.primary === this.me;
  }

  forget(project: string): void {
    this.cache.delete(project);
    this.generations.set(project, (this.generations.get(project) ?? 0) + 1);
    this.replicator.forget(project);
  }

  /** Before a write of the content core: refuses a project another node writes (a request routed here by a stale placement). */
  readonly mayWrite = async (project: string): Promise<void> => {
    const p = await this.placementOf(project, false, true, false);
    if (p && p.primary !== this.me) throw new NotPrimaryError(project);
  };

  /**
   * The content core's replication hook: on the primary, resolves once a quorum holds the step;
   * elsewhere (a replica indexing what it received) nothing. A write admitted while this node was
   * the primary (mayWrite read a placement up to a second old, or the process was paused or cut off
   * since) whose placement now names another node was committed here alone: it is not acknowledged.
   */
  readonly replicate = async (project: string, repo: Repo, previous: RefTips, o: { write?: boolean } = {}): Promise<void> => {
    const p = await this.placementOf(project, false, true, false);
    if (p && p.primary !== this.me && o.write) throw new DeposedError(project, p.epoch);
    if (!p || p.primary !== this.me) return;
    const copies = await this.filled(p);
    await this.replicator.replicate(project, repo, { epoch: p.epoch, replicas: copies.filter((n) => n !== this.me), quorum: this.quorumOf(copies.length) }, previous);
  };

  /**
   * The copies a step goes to. A placement short of copies (placed while few nodes were up) takes
   * more from the live nodes, and a copy on a node down longer than CNS_CLUSTER_REPLACE_AFTER_S is
   * replaced by one on a live node (only when there is one: a node that may come back is better
   * than none). New copies are seeded by the next step's shipment or a fetch.
   */
  private async filled(p: Placement): Promise<string[]> {
    const gone = p.copies.filter((n) => n !== this.me && this.isGone(n));
    const kept = p.copies.length - gone.length;
    if (kept >= this.d.settings.replicas) return p.copies;
    const more = rendezvousRank(p.project, this.liveNodes().filter((n) => !p.copies.includes(n)), this.d.settings.replicas - kept);
    if (more.length === 0) return p.copies;
    const leaving = gone.slice(0, Math.max(0, p.copies.length + more.length - this.d.settings.replicas));
    await this.placements.replaceCopies(p.project, leaving, more);
    for (const n of leaving) this.replicator.forget(p.project, n);
    const copies = [...p.copies.filter((n) => !leaving.includes(n)), ...more].sort();
    this.cache.set(p.project, { p: { ...p, copies }, at: performance.now() });
    if (leaving.length > 0) this.d.logger.warn({ project: p.project, replaced: leaving, by: more }, 'cluster: copies on nodes gone for good are replaced');
    return copies;
  }

  /** A member down (or gone from the list) for longer than CNS_CLUSTER_REPLACE_AFTER_S. */
  private isGone(node: string): boolean {
    const n = this.nodes.get(node);
    return !n || (n.state === 'down' && n.heartbeatAgeMs > this.d.settings.replaceAfterMs);
  }

  /** Where a replica fetches a project from: its primary's internal git endpoint, signed for this node. */
  private async sourceOf(project: string): Promise<{ url: string; headers: Record<string, string> }> {
    const p = await this.placementOf(project, true, true, false);
    const url = p?.primary ? this.urlOf(p.primary) : null;
    if (!p?.primary || !url) throw new DomainError('SERVICE_UNAVAILABLE', 'The project has no reachable primary to catch up from.', { reason: 'NO_PRIMARY', project }, { 'retry-after': '1' });
    const path = gitPathOf(project);
    return { url: new URL(path, url).toString(), headers: signedHeaders(this.key, this.me, 'GIT', path) };
  }

  /**
   * The coordinator sealed this copy at `epoch`: it refuses any step of an older epoch from now
   * on, then indexes all it holds and reports how far it got.
   */
  async seal(project: string, epoch: number): Promise<SealReport | { staleEpoch: number }> {
    const content = this.content!;
    const sealed = await content.follow(project, async (repo): Promise<{ stale: number } | { tipEpoch: number }> => {
      repo.ensure();
      const state = readCopyState(repo.gitdir);
      if (epoch < state.epoch) return { stale: state.epoch };
      const tipEpoch = tipEpochOf(state);
      writeCopyState(repo.gitdir, { epoch, role: 'replica', tipEpoch }, repo.durable);
      return { tipEpoch };
    });
    if ('stale' in sealed) return { staleEpoch: sealed.stale };
    this.forget(project);
    await content.reconcile(project);
    const head = content.head(project);
    return { tipEpoch: sealed.tipEpoch, version: head?.projectVersion ?? 0, commit: head?.commitId ?? null };
  }

  /** The coordinator committed this node as the project's primary at `epoch`. */
  async promote(project: string, epoch: number): Promise<void> {
    await this.content!.follow(project, async (repo) => {
      repo.ensure();
      const state = readCopyState(repo.gitdir);
      if (state.epoch > epoch) throw new DomainError('CONFLICT', 'A newer epoch sealed this copy.', { reason: 'STALE_EPOCH', project });
      writeCopyState(repo.gitdir, { epoch, role: 'primary', tipEpoch: tipEpochOf(state) }, repo.durable);
    });
    this.forget(project);
  }

  private async tick(): Promise<void> {
    try {
      await this.refreshNodes();
      if (this.d.membership.coordinator) {
        await this.failOver();
        this.drains.kick();
      }
    } catch (err) {
      this.d.logger.warn({ err: { message: (err as Error).message } }, 'cluster: a coordinator step failed; retrying at the next heartbeat');
    }
  }

  /** Reads the members again (every heartbeat; a move or a drain first). */
  async refreshNodes(): Promise<void> {
    const before = this.nodes;
    this.nodes = new Map((await this.d.membership.nodes()).map((n) => [n.id, n]));
    for (const [id, was] of before) {
      const now = this.nodes.get(id);
      if (was.state !== 'down' && (!now || now.state === 'down')) for (const listener of this.downListeners) listener(was);
    }
  }

  private readonly downListeners = new Set<(node: ClusterNodeView) => void>();

  /** Called with each member this node saw alive (up, draining, left) and now sees down (or gone). */
  onNodeDown(listener: (node: ClusterNodeView) => void): void {
    this.downListeners.add(listener);
  }

  /** Failover (docs/design/cluster.md §6) of every project whose primary is down: reserve the next epoch, seal a quorum of live copies, choose the most advanced, commit it, promote it. */
  private async failOver(): Promise<void> {
    // Draining and drained nodes still answer: their projects move by plan (nodeDrain.ts), not by failover.
    const down = [...this.nodes.values()].filter((n) => n.state === 'down').map((n) => n.id);
    const orphans = await this.placements.needingPrimary(down);
    // A few at a time, every one each round: a project that cannot be sealed yet holds up no other.
    for (let i = 0; i < orphans.length && this.ticker.running; i += FAILOVER_BATCH) {
      await Promise.all(orphans.slice(i, i + FAILOVER_BATCH).map((row) => this.electPrimary(row.project, row.epoch, row.state)));
    }
  }

  private async electPrimary(project: string, epoch: number, state: 'ok' | 'electing'): Promise<void> {
    let e = epoch;
    if (state === 'ok') {
      if (!(await this.placements.reserve(project, e))) return;
      e += 1;
      this.d.logger.warn({ project, epoch: e }, 'cluster: the project’s primary is down; electing another');
    }
    const p = await this.placements.get(project);
    if (!p || p.epoch !== e) return;
    const live = new Set(this.aliveNodes());
    const reports = await Promise.all(
      p.copies.filter((n) => live.has(n)).map(async (node) => {
        try {
          const r = node === this.me ? await this.seal(project, e) : await this.call(node, SEAL_PATH, { project, epoch: e });
          return 'version' in (r as object) ? { node, ...(r as SealReport) } : null;
        } catch (err) {
          this.d.logger.warn({ err: { message: (err as Error).message }, project, node }, 'cluster: a copy could not be sealed');
          return null;
        }
      }),
    );
    const sealed = reports.filter((r): r is SealReport & { node: string } => r !== null);
    if (sealed.length < this.quorumOf(p.copies.length)) return; // stays electing: retried at the next heartbeat
    // Every acknowledged write is on a quorum, so on at least one sealed copy. The most advanced is
    // the one whose history was written under the latest epoch, then the longest: an old primary's
    // unacknowledged tail (an older epoch) never wins over what a later primary had acknowledged.
    const best = sealed.sort((a, b) => b.tipEpoch - a.tipEpoch || b.version - a.version || a.node.localeCompare(b.node))[0]!;
    if (!(await this.placements.commit(project, e, best.node))) return;
    if (best.node === this.me) await this.promote(project, e);
    else await this.call(best.node, PROMOTE_PATH, { project, epoch: e });
    this.forget(project);
    this.d.logger.warn({ project, epoch: e, primary: best.node, version: best.version }, 'cluster: a new primary writes the project');
  }

  /** A signed internal call to another node; its `data`, or throws (its error envelope's code and message when it answered one). */
  async call(node: string, path: string, body: object, timeoutMs?: number): Promise<unknown> {
    const url = this.urlOf(node);
    if (!url) throw new Error(`node ${node} is not known`);
    // A copy that does not answer within the down-after time is as good as down for this round.
    const res = await callNode({ key: this.key, me: this.me, url, path, body: Buffer.from(JSON.stringify(body)), type: 'application/json', timeoutMs: timeoutMs ?? Math.max(1_000, this.d.settings.downAfterMs) });
    if (res.status !== 200) {
      const e = res.json as { code?: string; message?: string } | null;
      if (typeof e?.code === 'string' && (e.code === 'CONFLICT' || e.code === 'SERVICE_UNAVAILABLE' || e.code === 'NOT_FOUND')) throw new DomainError(e.code, `${node}: ${e.message ?? e.code}`, { node, path }, e.code === 'SERVICE_UNAVAILABLE' ? { 'retry-after': '1' } : {});
      throw new Error(`${node} answered ${res.status} to ${path}`);
    }
    return (res.json as { data: unknown }).data;
  }
}

/** The internal address of a project's repository for git fetch between nodes. */
export const gitPathOf = (project: string) => `/internal/git/${project}.git`;
