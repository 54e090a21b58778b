import test from 'ava';
import Database from 'better-sqlite3';
import { runMigrations } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { syncSeqMigration } from '../../src/db/migrations/028_sync_seq.ts';

test("migration 028: a sync's webhook deliveries keep their order as seq, their unique keys and their cascade; states gain an empty journal", (t) => {
  // A database as earlier versions left it (every migration before this one), with deliveries.
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.pragma('foreign_keys = ON');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((x) => x.version < syncSeqMigration.version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '');
  }
  db.exec(`INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ('u', 'a@example.com', 'x', '', '');
           INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('o', 'o', '', '');
           INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('p', 'o', 'p', '', '');
           INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at) VALUES ('s', 'p', 'sync', 's', 'read_write', 'h', 'cns_', '', '');
           INSERT INTO sync_states (sync_id, project_id, provider, trigger_mode, status, created_at, updated_at) VALUES ('s', 'p', 'github', 'webhook', 'active', '', '');`);
  const insert = db.prepare(`INSERT INTO sync_webhook_deliveries (sync_id, delivery_id, digest, received_at, run_id) VALUES ('s', ?, ?, 5, ?)`);
  for (const d of ['d3', 'd1', 'd2']) insert.run(`g-${d}`, d, `run_${d}`);
  runMigrations(db);

  t.deepEqual(db.prepare('SELECT seq, delivery_id, digest, received_at, run_id FROM sync_webhook_deliveries ORDER BY seq').all(), [
    { seq: 1, delivery_id: 'g-d3', digest: 'd3', received_at: 5, run_id: 'run_d3' },
    { seq: 2, delivery_id: 'g-d1', digest: 'd1', received_at: 5, run_id: 'run_d1' },
    { seq: 3, delivery_id: 'g-d2', digest: 'd2', received_at: 5, run_id: 'run_d2' },
  ]);
  t.is((db.prepare('SELECT pending_page FROM sync_states').get() as { pending_page: string | null }).pending_page, null);
  t.throws(() => db.prepare(`INSERT INTO sync_webhook_deliveries (sync_id, digest, received_at) VALUES ('s', 'd1', 6)`).run(), { any: true, code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.throws(() => db.prepare(`INSERT INTO sync_webhook_deliveries (sync_id, delivery_id, digest, received_at) VALUES ('s', 'g-d1', 'new', 6)`).run(), { any: true, code: 'SQLITE_CONSTRAINT_UNIQUE' });
  t.is(db.prepare(`INSERT INTO sync_webhook_deliveries (sync_id, digest, received_at) VALUES ('s', 'd4', 6)`).run().lastInsertRowid, 4);
  db.exec(`DELETE FROM connections WHERE id = 's'`);
  t.is((db.prepare('SELECT COUNT(*) AS n FROM sync_webhook_deliveries').get() as { n: number }).n, 0, 'gone with the sync');
});
