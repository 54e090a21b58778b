import type { Insertable, Selectable } from 'kysely';
import type { MetadataDb, MetadataStore } from '../db/metadata/metadataStore.ts';
import type { WebhookDeliveriesTable } from '../db/metadata/tables/webhooks.ts';
import { newId, nowIso } from '../util/ids.ts';

/** A delivery as stored. */
export type DeliveryRecord = Selectable<WebhookDeliveriesTable>;

export type DeliveryStatus = DeliveryRecord['status'];

export interface NewDelivery {
  id?: string;
  hookId: string;
  event: string;
  projectVersion: number | null;
  body: string;
  redeliveryOf?: string | null;
  /** A ping is recorded already attempted. */
  status?: DeliveryStatus;
}

/** What one attempt found. */
export interface AttemptOutcome {
  at: number;
  ok: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  durationMs: number;
  error: string | null;
}

/** Rows per INSERT: a few thousand parameters, under either engine's limit. */
const ROWS_PER_INSERT = 400;

const toRow = (d: NewDelivery, now: number): Insertable<WebhookDeliveriesTable> => ({
  id: d.id ?? newId('dlv'),
  hook_id: d.hookId,
  event: d.event,
  project_version: d.projectVersion,
  body: d.body,
  status: d.status ?? 'pending',
  next_attempt_at: now,
  redelivery_of: d.redeliveryOf ?? null,
  created_at: nowIso(),
});

/**
 * The webhook_deliveries table, on the metadata store: the queue (pending rows, in `seq` order
 * per hook) and the log. Counts are read through Number() (PostgreSQL answers them in text).
 */
export class DeliveryStore {
  constructor(private readonly metadata: MetadataStore) {}

  async insert(d: NewDelivery, now = Date.now()): Promise<DeliveryRecord> {
    return await this.metadata.db.insertInto('webhook_deliveries').values(toRow(d, now)).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Queues deliveries in the order given (their `seq` follows it, and a hook's are sent in that
   * order). `db`: the transaction they belong to.
   */
  async insertAll(ds: readonly NewDelivery[], db: MetadataDb = this.metadata.db, now = Date.now()): Promise<void> {
    for (let i = 0; i < ds.length; i += ROWS_PER_INSERT) {
      await db
        .insertInto('webhook_deliveries')
        .values(ds.slice(i, i + ROWS_PER_INSERT).map((d) => toRow(d, now)))
        .execute();
    }
  }

  async find(id: string): Promise<DeliveryRecord | null> {
    return (await this.metadata.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  /** A hook's deliveries, newest first. */
  async list(hookId: string, o: { limit: number; offset: number; status?: DeliveryStatus }): Promise<{ items: DeliveryRecord[]; total: number }> {
    let q = this.metadata.db.selectFrom('webhook_deliveries').where('hook_id', '=', hookId);
    if (o.status) q = q.where('status', '=', o.status);
    const items = await q.selectAll().orderBy('seq', 'desc').limit(o.limit).offset(o.offset).execute();
    const { n } = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  /**
   * The next delivery of each hook that is on: the oldest pending one (a hook's deliveries go
   * out one at a time, in order), whether due or not.
   */
  async heads(): Promise<(DeliveryRecord & { project_id: string })[]> {
    return await this.metadata.db
      .selectFrom('webhooks as w')
      .innerJoin('webhook_deliveries as d', (join) =>
        join.on((eb) =>
          eb(
            'd.seq',
            '=',
            eb
              .selectFrom('webhook_deliveries as p')
              .select((p) => p.fn.min('p.seq').as('seq'))
              .whereRef('p.hook_id', '=', 'w.id')
              .where('p.status', '=', 'pending'),
          ),
        ),
      )
      .selectAll('d')
      .select('w.project_id')
      .where('w.active', '=', 1)
      .where('w.disabled_at', 'is', null)
      .execute();
  }

  /**
   * Claims a pending delivery's attempt: moves its next attempt time from `expected` (as read)
   * to `until`, a compare-and-swap. False when another process claimed it first (or it is no
   * longer pending): the attempt is theirs. A process that dies mid-attempt leaves the delivery
   * due again at `until`.
   */
  async claim(id: string, expected: number, until: number): Promise<boolean> {
    const r = await this.metadata.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: until })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '=', expected)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /**
   * Records an attempt; `next` is when to try again (null: the delivery is over, delivered or
   * failed). Null when the delivery is gone (its hook was deleted meanwhile).
   */
  async recordAttempt(id: string, o: AttemptOutcome, next: number | null): Promise<DeliveryRecord | null> {
    const status: DeliveryStatus = o.ok ? 'delivered' : next === null ? 'failed' : 'pending';
    const row = await this.metadata.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status,
        attempts: eb('attempts', '+', 1),
        first_attempt_at: eb.fn.coalesce('first_attempt_at', eb.val(o.at)),
        last_attempt_at: o.at,
        next_attempt_at: next ?? o.at,
        response_status: o.responseStatus,
        response_body: o.responseBody,
        duration_ms: o.durationMs,
        error: o.error,
      }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  }

  /** Keeps a hook's `keep` latest finished deliveries (the log); pending ones are never removed. */
  async prune(hookId: string, keep: number): Promise<number> {
    const r = await this.metadata.db
      .deleteFrom('webhook_deliveries')
      .where('hook_id', '=', hookId)
      .where('status', '<>', 'pending')
      .where('seq', '<', (eb) =>
        eb.fn.coalesce(
          eb
            .selectFrom('webhook_deliveries as kept')
            .select('kept.seq')
            .where('kept.hook_id', '=', hookId)
            .where('kept.status', '<>', 'pending')
            .orderBy('kept.seq', 'desc')
            .limit(1)
            .offset(keep - 1),
          eb.lit(0),
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async postpone(id: string, until: number): Promise<void> {
    await this.metadata.db.updateTable('webhook_deliveries').set({ next_attempt_at: until }).where('id', '=', id).where('status', '=', 'pending').execute();
  }

  async pendingCount(hookId: string): Promise<number> {
    const { n } = await this.metadata.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('hook_id', '=', hookId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** Each hook's latest deliveries (the dashboard's list), at most `per` each. */
  async recent(hookIds: string[], per: number): Promise<Map<string, DeliveryRecord[]>> {
    const out = new Map<string, DeliveryRecord[]>();
    for (const id of hookIds) out.set(id, await this.metadata.db.selectFrom('webhook_deliveries').selectAll().where('hook_id', '=', id).orderBy('seq', 'desc').limit(per).execute());
    return out;
  }
}
