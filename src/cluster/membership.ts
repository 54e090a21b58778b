import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { ClusterSettings } from '../config/clusterSettings.ts';
import type { MetadataDb } from '../db/metadata/metadataStore.ts';
import type { ClusterNodeState } from '../db/metadata/tables/cluster.ts';
import type { Logger } from '../logging/logger.ts';
import { settleClusterConfig } from './clusterConfig.ts';
import { ClusterLease } from './coordinatorLease.ts';
import { Ticker } from './ticker.ts';
import { keyFingerprint } from './keyFingerprint.ts';

/** A node of the cluster as `GET /api/v1/cluster` shows it; the age is PostgreSQL's now() minus the last beat. */
export interface ClusterNodeView {
  id: string;
  url: string;
  state: ClusterNodeState;
  heartbeatAgeMs: number;
  version: string;
  startedAt: string;
}

/** This node may not join the cluster; the message is the one line the operator reads. */
export class ClusterJoinRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterJoinRefused';
  }
}

export interface MembershipDeps {
  /** The metadata store on PostgreSQL. */
  db: MetadataDb;
  settings: Pick<ClusterSettings, 'nodeId' | 'nodeUrl' | 'replicas' | 'heartbeatMs' | 'downAfterMs'>;
  signingSecret: Uint8Array;
  version: string;
  logger: Logger;
}

const COORDINATOR = 'coordinator';
const ms = (n: number) => sql`(${n}::int * interval '1 millisecond')`;
/** ISO 8601 in UTC, as the service's other times are written. */
const iso = (column: string) => sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * This node's membership of the cluster, in PostgreSQL (docs/design/cluster.md §2): it joins
 * (same signing key and replica count as the cluster, its id not live elsewhere), then beats
 * every heartbeat while it runs. The node holding the coordinator lease marks down the nodes
 * whose beat is older than down-after. Every time compared is PostgreSQL's now(). Runs once per
 * node, on the process with the box's duties; `nodes()` reads from any process.
 */
export class ClusterMembership {
  readonly nodeId: string;
  private incarnationId: string | null = null;
  private lease: ClusterLease | null = null;
  private readonly ticker: Ticker;
  private lastBeat: number | null = null;
  /** A beat is failing (PostgreSQL away): logged once when it starts and once when it ends. */
  private failing = false;
  /** performance.now() when this run last became the coordinator, and when a beat of it last failed. */
  private coordinatingSince = 0;
  private failedAt = -Infinity;
  private onLost: (reason: string) => void = () => {};

  constructor(private readonly deps: MembershipDeps) {
    this.nodeId = deps.settings.nodeId;
    this.ticker = new Ticker(deps.settings.heartbeatMs, () => this.tick());
  }

  /** This run's incarnation, once joined. */
  get incarnation(): string | null {
    return this.incarnationId;
  }

  /** performance.now() of the last beat PostgreSQL recorded (the self-fence compares with it), or null. */
  get lastBeatAt(): number | null {
    return this.lastBeat;
  }

  /** Whether this node held the coordinator lease at its last renewal. */
  get coordinator(): boolean {
    return this.lease?.epoch != null;
  }

  /**
   * Checks the node may join and records it `up` under a new incarnation, then starts beating.
   * Throws ClusterJoinRefused (one line) for a signing key or a replica count other than the
   * cluster's, or an id that is live at another address. `onLost`: another run took this node's
   * id (its incarnation no longer matches), so this one must stop serving.
   */
  async join(onLost: (reason: string) => void = () => {}): Promise<void> {
    const { db, settings } = this.deps;
    const stored = await settleClusterConfig(db, { key_fingerprint: keyFingerprint(this.deps.signingSecret), replicas: String(settings.replicas) });
    if (stored.key_fingerprint !== keyFingerprint(this.deps.signingSecret)) {
      throw new ClusterJoinRefused("this node's signing.key differs from the cluster's: copy the first node's data-folder signing.key to every node");
    }
    if (stored.replicas !== String(settings.replicas)) {
      throw new ClusterJoinRefused(`CNS_REPLICAS is ${settings.replicas} but the cluster's is ${stored.replicas}: every node must set the same`);
    }
    const incarnation = randomBytes(8).toString('hex');
    // One statement: an id live at another address is left as it is (no row comes back).
    const { rows } = await sql<{ node_id: string }>`
      INSERT INTO cluster_nodes (node_id, url, state, incarnation, started_at, heartbeat_at, version)
      VALUES (${this.nodeId}, ${settings.nodeUrl}, 'up', ${incarnation}, now(), now(), ${this.deps.version})
      ON CONFLICT (node_id) DO UPDATE
        SET url = EXCLUDED.url, state = 'up', incarnation = EXCLUDED.incarnation, started_at = now(), heartbeat_at = now(), version = EXCLUDED.version
        WHERE NOT (cluster_nodes.state = 'up' AND cluster_nodes.url <> EXCLUDED.url AND cluster_nodes.heartbeat_at > now() - ${ms(settings.downAfterMs)})
      RETURNING node_id`.execute(db);
    if (rows.length === 0) {
      const other = await db.selectFrom('cluster_nodes').select('url').where('node_id', '=', this.nodeId).executeTakeFirst();
      throw new ClusterJoinRefused(`node id ${this.nodeId} is up at ${other?.url ?? 'another address'} with a fresh heartbeat: give this node another CNS_NODE_ID (or stop that node)`);
    }
    this.incarnationId = incarnation;
    this.onLost = onLost;
    this.lease = new ClusterLease(db, COORDINATOR, `${this.nodeId}:${incarnation}`, settings.downAfterMs);
    this.lastBeat = performance.now();
    this.ticker.start();
    this.deps.logger.info({ node: this.nodeId, url: settings.nodeUrl, incarnation }, 'cluster: this node joined');
  }

  /**
   * Records a heartbeat for this incarnation. Answers true when recorded; false when PostgreSQL
   * failed (logged once per episode, retried at the next beat) or when another run holds the id
   * (reported through onLost once, and the beats stop). Never throws.
   */
  async beat(): Promise<boolean> {
    if (this.incarnationId === null) return false;
    let state: ClusterNodeState | undefined;
    try {
      const row = await this.deps.db
        .updateTable('cluster_nodes')
        .set({ heartbeat_at: sql`now()` })
        .where('node_id', '=', this.nodeId)
        .where('incarnation', '=', this.incarnationId)
        .returning('state')
        .executeTakeFirst();
      state = row?.state;
      if (state === 'down') await this.comeBack();
    } catch (err) {
      if (!this.failing) this.deps.logger.warn({ err: { message: (err as Error).message } }, 'cluster: the heartbeat failed; retrying at each beat');
      this.failing = true;
      this.failedAt = performance.now();
      return false;
    }
    if (this.failing) this.deps.logger.info('cluster: the heartbeat is recorded again');
    this.failing = false;
    if (state === undefined) {
      this.lost(`node id ${this.nodeId} was taken by another run of it (incarnation ${this.incarnationId} no longer matches)`);
      return false;
    }
    this.lastBeat = performance.now();
    return true;
  }

  /**
   * The coordinator marked this node down while it ran (its beats came late: PostgreSQL away, a
   * stalled event loop). It comes back `up` under a new incarnation, as a restarted node would,
   * so what the cluster decided about the old one stays with the old one; only while this run
   * still holds the id.
   */
  private async comeBack(): Promise<void> {
    const next = randomBytes(8).toString('hex');
    const back = await this.deps.db
      .updateTable('cluster_nodes')
      .set({ state: 'up', incarnation: next, heartbeat_at: sql`now()` })
      .where('node_id', '=', this.nodeId)
      .where('incarnation', '=', this.incarnationId!)
      .where('state', '=', 'down')
      .executeTakeFirst();
    if (back.numUpdatedRows === 0n) return;
    this.deps.logger.warn({ node: this.nodeId, incarnation: next }, 'cluster: this node was marked down (its heartbeats came late); it is up again under a new incarnation');
    this.incarnationId = next;
  }

  /** The nodes of the cluster, by id. */
  async nodes(): Promise<ClusterNodeView[]> {
    const { rows } = await sql<{ id: string; url: string; state: ClusterNodeState; heartbeat_age_ms: number; version: string; started_at: string }>`
      SELECT node_id AS id, url, state, version, ${iso('started_at')} AS started_at,
             greatest(0, (extract(epoch FROM now() - heartbeat_at) * 1000))::bigint AS heartbeat_age_ms
        FROM cluster_nodes ORDER BY node_id`.execute(this.deps.db);
    return rows.map((r) => ({ id: r.id, url: r.url, state: r.state, heartbeatAgeMs: Number(r.heartbeat_age_ms), version: r.version, startedAt: r.started_at }));
  }

  /** A clean stop: no more beats, this run's row marked down, the coordinator lease let go. Never throws. */
  async leave(): Promise<void> {
    // After the last beat: a beat in flight may have moved this run to a new incarnation.
    await this.close();
    const incarnation = this.incarnationId;
    if (incarnation === null) return;
    try {
      // A drained node stays `left`: it held nothing, and stopping it is how it is removed.
      await this.deps.db.updateTable('cluster_nodes').set({ state: sql`CASE WHEN state = 'left' THEN 'left' ELSE 'down' END` }).where('node_id', '=', this.nodeId).where('incarnation', '=', incarnation).execute();
      await this.lease?.release();
    } catch (err) {
      // The others mark it down when its heartbeat is old enough, and the lease expires.
      this.deps.logger.warn({ err: { message: (err as Error).message } }, 'cluster: could not record leaving the cluster');
    }
  }

  /** Stops the beats (waiting for one in flight); the row stays as it is. */
  async close(): Promise<void> {
    await this.ticker.stop();
  }

  /** One heartbeat: the beat, then the coordinator lease, then (when held) down detection. */
  private async tick(): Promise<void> {
    if (!(await this.beat()) || !this.ticker.running) {
      this.lease?.forget();
      return;
    }
    try {
      const wasCoordinator = this.coordinator;
      if (!(await this.lease!.renew())) {
        if (wasCoordinator) this.deps.logger.info('cluster: this node is no longer the coordinator');
        return;
      }
      if (!wasCoordinator) {
        this.coordinatingSince = performance.now();
        this.deps.logger.info({ epoch: this.lease!.epoch }, 'cluster: this node is the coordinator');
      }
      // A coordinator that could not reach PostgreSQL itself a moment ago gives every node one
      // down-after period to beat again: after PostgreSQL was away for everyone, the first node
      // back must not find the others' old beats and fail them over. A takeover from a coordinator
      // that died waits for nothing (failover time).
      const since = performance.now() - Math.max(this.coordinatingSince, this.failedAt);
      if (this.failedAt > this.coordinatingSince - 2 * this.deps.settings.downAfterMs && since < this.deps.settings.downAfterMs) return;
      const down = await markDownNodes(this.deps.db, this.deps.settings.downAfterMs);
      if (down.length) this.deps.logger.warn({ nodes: down }, 'cluster: nodes without a heartbeat marked down');
    } catch (err) {
      this.lease!.forget();
      this.deps.logger.warn({ err: { message: (err as Error).message } }, 'cluster: the coordinator lease or down detection failed');
    }
  }

  /** Once: beat() stops at once when the incarnation is gone. */
  private lost(reason: string): void {
    this.ticker.halt();
    this.lease?.forget();
    this.incarnationId = null;
    this.deps.logger.error({ node: this.nodeId }, `cluster: ${reason}: this node stops`);
    this.onLost(reason);
  }
}

/** The coordinator's down detection: nodes `up` (or draining: they still hold copies) whose last beat is older than down-after become `down`. Answers their ids. */
export async function markDownNodes(db: MetadataDb, downAfterMs: number): Promise<string[]> {
  const { rows } = await sql<{ node_id: string }>`
    UPDATE cluster_nodes SET state = 'down' WHERE state IN ('up', 'draining') AND heartbeat_at < now() - ${ms(downAfterMs)} RETURNING node_id`.execute(db);
  return rows.map((r) => r.node_id);
}

/** A drain's steps on a node's state (`draining`, then `left` once it holds nothing), from one of `from` only; false when it was in none. */
export async function changeNodeState(db: MetadataDb, node: string, from: readonly ClusterNodeState[], to: ClusterNodeState): Promise<boolean> {
  const r = await db.updateTable('cluster_nodes').set({ state: to }).where('node_id', '=', node).where('state', 'in', [...from]).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
