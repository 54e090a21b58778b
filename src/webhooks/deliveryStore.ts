import type { Db } from '../db/database.ts';
import { newId, nowIso } from '../util/ids.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRecord {
  seq: number;
  id: string;
  hook_id: string;
  event: string;
  project_version: number | null;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  first_attempt_at: number | null;
  last_attempt_at: number | null;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  redelivery_of: string | null;
  created_at: string;
}

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

/** The webhook_deliveries table: the queue (pending rows, in `seq` order per hook) and the log. */
export class DeliveryStore {
  constructor(private readonly db: Db) {}

  insert(d: NewDelivery, now = Date.now()): DeliveryRecord {
    const id = d.id ?? newId('dlv');
    this.db
      .prepare(
        `INSERT INTO webhook_deliveries (id, hook_id, event, project_version, body, status, next_attempt_at, redelivery_of, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, d.hookId, d.event, d.projectVersion, d.body, d.status ?? 'pending', now, d.redeliveryOf ?? null, nowIso());
    return this.find(id)!;
  }

  find(id: string): DeliveryRecord | null {
    return (this.db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(id) as DeliveryRecord | undefined) ?? null;
  }

  /** A hook's deliveries, newest first. */
  list(hookId: string, o: { limit: number; offset: number; status?: DeliveryStatus }): { items: DeliveryRecord[]; total: number } {
    const where = o.status ? 'hook_id = ? AND status = ?' : 'hook_id = ?';
    const args = o.status ? [hookId, o.status] : [hookId];
    const items = this.db.prepare(`SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(...args, o.limit, o.offset) as DeliveryRecord[];
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${where}`).get(...args) as { n: number }).n;
    return { items, total };
  }

  /**
   * The next delivery of each hook that is on: the oldest pending one (a hook's deliveries go
   * out one at a time, in order), whether due or not.
   */
  heads(): DeliveryRecord[] {
    return this.db
      .prepare(
        `SELECT d.* FROM webhooks w
           JOIN webhook_deliveries d ON d.seq = (SELECT min(seq) FROM webhook_deliveries p WHERE p.hook_id = w.id AND p.status = 'pending')
          WHERE w.active = 1 AND w.disabled_at IS NULL`,
      )
      .all() as DeliveryRecord[];
  }

  /** Records an attempt; `next` is when to try again (null: the delivery is over, delivered or failed). */
  recordAttempt(id: string, o: AttemptOutcome, next: number | null): DeliveryRecord {
    const status: DeliveryStatus = o.ok ? 'delivered' : next === null ? 'failed' : 'pending';
    this.db
      .prepare(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ?), last_attempt_at = ?,
           next_attempt_at = ?, response_status = ?, response_body = ?, duration_ms = ?, error = ? WHERE id = ?`,
      )
      .run(status, o.at, o.at, next ?? o.at, o.responseStatus, o.responseBody, o.durationMs, o.error, id);
    return this.find(id)!;
  }

  /** Keeps a hook's `keep` latest finished deliveries (the log); pending ones are never removed. */
  prune(hookId: string, keep: number): number {
    return this.db
      .prepare(
        `DELETE FROM webhook_deliveries WHERE hook_id = ? AND status <> 'pending' AND seq < coalesce(
           (SELECT seq FROM webhook_deliveries WHERE hook_id = ? AND status <> 'pending' ORDER BY seq DESC LIMIT 1 OFFSET ?), 0)`,
      )
      .run(hookId, hookId, keep - 1).changes;
  }

  postpone(id: string, until: number): void {
    this.db.prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'").run(until, id);
  }

  pendingCount(hookId: string): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE hook_id = ? AND status = 'pending'").get(hookId) as { n: number }).n;
  }

  /** Each hook's latest deliveries (the dashboard's list), at most `per` each. */
  recent(hookIds: string[], per: number): Map<string, DeliveryRecord[]> {
    const out = new Map<string, DeliveryRecord[]>();
    const stmt = this.db.prepare('SELECT * FROM webhook_deliveries WHERE hook_id = ? ORDER BY seq DESC LIMIT ?');
    for (const id of hookIds) out.set(id, stmt.all(id, per) as DeliveryRecord[]);
    return out;
  }
}
