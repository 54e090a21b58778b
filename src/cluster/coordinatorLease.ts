import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { MetadataDb } from '../db/metadata/metadataStore.ts';

/**
 * A lease in `cluster_leases` (PostgreSQL), judged by PostgreSQL's clock only: held by whoever
 * renewed it last while it had not expired. Passing to another holder grows its epoch, so work
 * the coordinator starts can carry the epoch it ran under.
 */
export class ClusterLease {
  private heldEpoch: number | null = null;
  /**
   * performance.now() until which this holder may act on the lease: the time the renewal was
   * sent plus the ttl, so it ends no later than PostgreSQL's expiry (set at the statement's
   * now(), later still). Only this process's monotonic clock is read.
   */
  private validUntil = 0;

  constructor(
    private readonly db: MetadataDb,
    readonly name: string,
    /** This run of this node (node id and incarnation): a restarted node is another holder. */
    readonly holder: string,
    private readonly ttlMs: number,
  ) {}

  /** The epoch this holder holds the lease at, or null when it does not (or its last renewal is too old to count on). */
  get epoch(): number | null {
    return performance.now() < this.validUntil ? this.heldEpoch : null;
  }

  /**
   * Takes the lease when it is free or expired, or extends it when this holder has it: the row is
   * created on first use. Answers whether this holder has it now. Throws when PostgreSQL does.
   */
  async renew(): Promise<boolean> {
    const sent = performance.now();
    const { rows } = await sql<{ epoch: number }>`
      INSERT INTO cluster_leases (name, holder, epoch, expires_at)
      VALUES (${this.name}, ${this.holder}, 1, now() + ${this.ttlMs}::int * interval '1 millisecond')
      ON CONFLICT (name) DO UPDATE
        SET holder = EXCLUDED.holder,
            expires_at = EXCLUDED.expires_at,
            epoch = cluster_leases.epoch + CASE WHEN cluster_leases.holder <> EXCLUDED.holder THEN 1 ELSE 0 END
        WHERE cluster_leases.holder = EXCLUDED.holder OR cluster_leases.expires_at < now()
      RETURNING epoch`.execute(this.db);
    this.heldEpoch = rows[0]?.epoch ?? null;
    this.validUntil = sent + this.ttlMs;
    return this.epoch !== null;
  }

  /** Lets the lease go at once (a clean stop), so the next holder need not wait for it to expire. */
  async release(): Promise<void> {
    // Whatever this run believes: a renewal that ended during the stop may have recorded it as holder.
    this.heldEpoch = null;
    await sql`UPDATE cluster_leases SET expires_at = '-infinity' WHERE name = ${this.name} AND holder = ${this.holder}`.execute(this.db);
  }

  /** Forgets holding it without telling PostgreSQL (a failed renewal: it may have expired meanwhile). */
  forget(): void {
    this.heldEpoch = null;
  }
}
