import { createHash } from 'node:crypto';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';

/** How many deliveries of one sync are remembered, and for how long. */
export interface DeliveryBounds {
  maxPerSync: number;
  maxAgeMs: number;
}

/** What a delivery turned out to be: the first of its kind, or a repeat of one already accepted. */
export type DeliveryClaim = { duplicate: false } | { duplicate: true; runId: string | null };

/**
 * The webhook deliveries each sync accepted, so that a replay starts no run: the same delivery
 * id again, or a new id with the same body and signature (a captured request resent), on the
 * metadata store: claimed in one transaction, so two processes given the same delivery start one run.
 * Bounded per sync: deliveries older than `maxAgeMs` are forgotten, and only the newest
 * `maxPerSync` are kept.
 */
export class WebhookDeliveries {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly bounds: () => DeliveryBounds,
    private readonly now: () => number = Date.now,
  ) {}

  /** The digest a replay shares with the original, whatever delivery id it claims. */
  static digest(body: Buffer, signature: string): string {
    return createHash('sha256').update(signature).update('\n').update(body).digest('hex');
  }

  /**
   * Records the delivery, unless it (its id or its digest) was already accepted. Two processes
   * claiming the same delivery at once: the unique indexes let one row in, and the other finds it.
   */
  async claim(syncId: string, deliveryId: string | null, digest: string): Promise<DeliveryClaim> {
    const { maxPerSync, maxAgeMs } = this.bounds();
    const now = this.now();
    return this.metadata.transaction(async (trx) => {
      await trx.deleteFrom('sync_webhook_deliveries').where('sync_id', '=', syncId).where('received_at', '<', now - maxAgeMs).execute();
      const seen = () =>
        trx
          .selectFrom('sync_webhook_deliveries')
          .select('run_id')
          .where('sync_id', '=', syncId)
          .where((eb) => (deliveryId === null ? eb('digest', '=', digest) : eb.or([eb('digest', '=', digest), eb('delivery_id', '=', deliveryId)])))
          .limit(1)
          .executeTakeFirst();
      const before = await seen();
      if (before) return { duplicate: true, runId: before.run_id };
      const inserted = await trx
        .insertInto('sync_webhook_deliveries')
        .values({ sync_id: syncId, delivery_id: deliveryId, digest, received_at: now })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
        // Claimed meanwhile by another process (PostgreSQL's read committed): theirs.
        const theirs = await seen();
        return { duplicate: true, runId: theirs?.run_id ?? null };
      }
      await trx
        .deleteFrom('sync_webhook_deliveries')
        .where('sync_id', '=', syncId)
        .where('seq', 'not in', trx.selectFrom('sync_webhook_deliveries').select('seq').where('sync_id', '=', syncId).orderBy('received_at', 'desc').orderBy('seq', 'desc').limit(maxPerSync))
        .execute();
      return { duplicate: false };
    });
  }

  /** The run the delivery started, answered again to its repeats. */
  async attachRun(syncId: string, digest: string, runId: string): Promise<void> {
    await this.metadata.db.updateTable('sync_webhook_deliveries').set({ run_id: runId }).where('sync_id', '=', syncId).where('digest', '=', digest).execute();
  }

  /** The delivery started nothing (the sync is paused): a redelivery later may. */
  async release(syncId: string, digest: string): Promise<void> {
    await this.metadata.db.deleteFrom('sync_webhook_deliveries').where('sync_id', '=', syncId).where('digest', '=', digest).execute();
  }

  /** How many deliveries of the sync are remembered. */
  async count(syncId: string): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('sync_webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sync_id', '=', syncId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
