import { createHash } from 'node:crypto';
import { inTransaction, type Db } from '../../db/database.ts';

/** How many deliveries of one sync are remembered, and for how long. */
export interface DeliveryBounds {
  maxPerSync: number;
  maxAgeMs: number;
}

/** What a delivery turned out to be: the first of its kind, or a repeat of one already accepted. */
export type DeliveryClaim = { duplicate: false } | { duplicate: true; runId: string | null };

/**
 * The webhook deliveries each sync accepted, so that a replay starts no run: the same delivery
 * id again, or a new id with the same body and signature (a captured request resent). In SQLite,
 * claimed in one write transaction, so two processes given the same delivery start one run.
 * Bounded per sync: deliveries older than `maxAgeMs` are forgotten, and only the newest
 * `maxPerSync` are kept.
 */
export class WebhookDeliveries {
  constructor(
    private readonly db: Db,
    private readonly bounds: () => DeliveryBounds,
    private readonly now: () => number = Date.now,
  ) {}

  /** The digest a replay shares with the original, whatever delivery id it claims. */
  static digest(body: Buffer, signature: string): string {
    return createHash('sha256').update(signature).update('\n').update(body).digest('hex');
  }

  /** Records the delivery, unless it (its id or its digest) was already accepted. */
  claim(syncId: string, deliveryId: string | null, digest: string): DeliveryClaim {
    const { maxPerSync, maxAgeMs } = this.bounds();
    const now = this.now();
    return inTransaction(this.db, () => {
      this.db.prepare('DELETE FROM sync_webhook_deliveries WHERE sync_id = ? AND received_at < ?').run(syncId, now - maxAgeMs);
      const seen = this.db
        .prepare('SELECT run_id FROM sync_webhook_deliveries WHERE sync_id = ? AND (digest = ? OR delivery_id = ?) LIMIT 1')
        .get(syncId, digest, deliveryId) as { run_id: string | null } | undefined;
      if (seen) return { duplicate: true, runId: seen.run_id };
      this.db
        .prepare('INSERT INTO sync_webhook_deliveries (sync_id, delivery_id, digest, received_at) VALUES (?, ?, ?, ?)')
        .run(syncId, deliveryId, digest, now);
      this.db
        .prepare(
          `DELETE FROM sync_webhook_deliveries WHERE sync_id = ? AND rowid NOT IN
             (SELECT rowid FROM sync_webhook_deliveries WHERE sync_id = ? ORDER BY received_at DESC, rowid DESC LIMIT ?)`,
        )
        .run(syncId, syncId, maxPerSync);
      return { duplicate: false };
    });
  }

  /** The run the delivery started, answered again to its repeats. */
  attachRun(syncId: string, digest: string, runId: string): void {
    this.db.prepare('UPDATE sync_webhook_deliveries SET run_id = ? WHERE sync_id = ? AND digest = ?').run(runId, syncId, digest);
  }

  /** The delivery started nothing (the sync is paused): a redelivery later may. */
  release(syncId: string, digest: string): void {
    this.db.prepare('DELETE FROM sync_webhook_deliveries WHERE sync_id = ? AND digest = ?').run(syncId, digest);
  }

  /** How many deliveries of the sync are remembered. */
  count(syncId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM sync_webhook_deliveries WHERE sync_id = ?').get(syncId) as { n: number }).n;
  }
}
