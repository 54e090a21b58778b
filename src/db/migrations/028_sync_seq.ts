import type { Migration } from '../migrate.ts';

/**
 * Syncs on the metadata store (issue 30). A sync's webhook deliveries were kept newest-first by
 * SQLite's rowid, which PostgreSQL has not: they get an explicit `seq` (the table is rebuilt, the
 * old rowid order kept). `pending_page` journals a pulled page between its content commit and
 * the metadata transaction that stores its items and moves the source cursor: the two stores no
 * longer share a transaction, and a run resuming after a crash between them replays it from here
 * (src/platform/runtime/runSync.ts).
 */
export const syncSeqMigration: Migration = {
  version: 28,
  name: 'sync_seq',
  sql: `
CREATE TABLE sync_webhook_deliveries_v2 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  delivery_id TEXT,
  digest TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  run_id TEXT
);
INSERT INTO sync_webhook_deliveries_v2 (sync_id, delivery_id, digest, received_at, run_id)
  SELECT sync_id, delivery_id, digest, received_at, run_id FROM sync_webhook_deliveries ORDER BY rowid;
DROP TABLE sync_webhook_deliveries;
ALTER TABLE sync_webhook_deliveries_v2 RENAME TO sync_webhook_deliveries;
CREATE UNIQUE INDEX sync_webhook_deliveries_id ON sync_webhook_deliveries(sync_id, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE UNIQUE INDEX sync_webhook_deliveries_digest ON sync_webhook_deliveries(sync_id, digest);
CREATE INDEX sync_webhook_deliveries_age ON sync_webhook_deliveries(sync_id, received_at);

ALTER TABLE sync_states ADD COLUMN pending_page TEXT;
`,
};
