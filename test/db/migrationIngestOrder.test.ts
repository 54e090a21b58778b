import test from 'ava';
import Database from 'better-sqlite3';
import { migrations } from '../../src/db/migrations/index.ts';

/** Migration 029 on a database with rows: the queue's and the rules' order is kept as `seq`, upload grants gain an empty claim. */
test('029 keeps every task, rule and upload grant, with the old insertion order as seq', (t) => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  for (const m of migrations.filter((m) => m.version < 29)) db.exec(m.sql);
  const now = '2026-01-01T00:00:00.000Z';
  db.prepare(`INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ('usr_1', 'a@example.com', 'x', ?, ?)`).run(now, now);
  db.prepare(`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'Org', ?, ?)`).run(now, now);
  db.prepare(`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_1', 'org_1', 'P', ?, ?)`).run(now, now);
  // Ids against insertion order: only the rowid knows it.
  for (const id of ['ing_c', 'ing_a', 'ing_b']) {
    db.prepare(`INSERT INTO ingest_tasks (id, project_id, source, kind, status, target_path, input, created_by, actor, created_at) VALUES (?, 'prj_1', 's', 'file', 'queued', '', '{}', 'usr_1', '{}', ?)`).run(id, now);
  }
  for (const id of ['rul_z', 'rul_a']) db.prepare(`INSERT INTO ingest_rules (id, project_id, name, target, created_at, updated_at) VALUES (?, 'prj_1', ?, 'markdown', ?, ?)`).run(id, id, now, now);
  db.prepare(`INSERT INTO node_uploads (id, project_id, node_id, name, path, base_version, size, principal_kind, principal_id, created_at, expires_at) VALUES ('upl_1', 'prj_1', 'nod_1', 'a', 'a', 0, 1, 'user', 'usr_1', ?, ?)`).run(now, now);

  db.exec(migrations.find((m) => m.version === 29)!.sql);
  t.deepEqual(db.prepare('SELECT id, seq FROM ingest_tasks ORDER BY seq').all(), [
    { id: 'ing_c', seq: 1 },
    { id: 'ing_a', seq: 2 },
    { id: 'ing_b', seq: 3 },
  ]);
  t.deepEqual((db.prepare('SELECT id FROM ingest_rules ORDER BY created_at, seq').all() as { id: string }[]).map((r) => r.id), ['rul_z', 'rul_a']);
  t.like(db.prepare(`SELECT * FROM node_uploads WHERE id = 'upl_1'`).get(), { claimed_at: null, node_id: 'nod_1' });
  db.prepare(`INSERT INTO ingest_tasks (id, project_id, source, kind, status, target_path, input, created_by, actor, created_at) VALUES ('ing_new', 'prj_1', 's', 'file', 'queued', '', '{}', 'usr_1', '{}', ?)`).run(now);
  t.is((db.prepare(`SELECT seq FROM ingest_tasks WHERE id = 'ing_new'`).get() as { seq: number }).seq, 4, 'new rows follow');
  let refused: unknown = null;
  try {
    db.prepare(`INSERT INTO ingest_tasks (id, project_id, source, kind, status, target_path, input, created_by, actor, created_at) VALUES ('ing_new', 'prj_1', 's', 'file', 'queued', '', '{}', 'usr_1', '{}', ?)`).run(now);
  } catch (e) {
    refused = e;
  }
  t.is((refused as { code?: string } | null)?.code, 'SQLITE_CONSTRAINT_UNIQUE', 'ids stay unique');
  db.prepare(`DELETE FROM projects WHERE id = 'prj_1'`).run();
  t.is((db.prepare('SELECT COUNT(*) AS n FROM ingest_tasks').get() as { n: number }).n, 0, 'tasks still go with their project');
  t.is((db.prepare('SELECT COUNT(*) AS n FROM ingest_rules').get() as { n: number }).n, 0);
  t.deepEqual(db.pragma('foreign_key_check'), []);
  db.close();
});
