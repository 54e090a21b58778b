import type { Migration } from '../migrate.ts';

/**
 * Webhook deliveries a sync has accepted (issue 28), so that a replayed one starts no run: the
 * platform's delivery id (GitHub's `X-GitHub-Delivery`) and a digest of the body with its
 * signature, each unique per sync. Kept in SQLite rather than in a process so that every process
 * serving the same data sees the same deliveries; bounded per sync by count and age
 * (src/platform/runtime/webhookDeliveries.ts), and gone with the sync.
 */
export const webhookDeliveriesMigration: Migration = {
  version: 21,
  name: 'webhook_deliveries',
  sql: `
CREATE TABLE sync_webhook_deliveries (
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  -- The platform's id of the delivery; NULL when it sent none.
  delivery_id TEXT,
  -- sha256 of the signature and the body: a replay under a new delivery id has the same one.
  digest TEXT NOT NULL,
  -- Milliseconds since the epoch.
  received_at INTEGER NOT NULL,
  -- The run the delivery started (or joined); NULL until then.
  run_id TEXT
);
CREATE UNIQUE INDEX sync_webhook_deliveries_id ON sync_webhook_deliveries(sync_id, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE UNIQUE INDEX sync_webhook_deliveries_digest ON sync_webhook_deliveries(sync_id, digest);
CREATE INDEX sync_webhook_deliveries_age ON sync_webhook_deliveries(sync_id, received_at);
`,
};
