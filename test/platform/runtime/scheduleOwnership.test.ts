import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../../src/db/metadata/metadataStore.ts';
import { createLogger } from '../../../src/logging/logger.ts';
import { SyncRuntime, type SyncRuntimeDeps } from '../../../src/platform/runtime/syncRuntime.ts';
import { SyncStore } from '../../../src/sync/syncStore.ts';

// The sync scheduler under several workers (issue 29), on one SQLite file shared by two
// connections as two worker processes would: a scheduled run starts on a worker that adopts the
// sync's project, once (the claim is a compare-and-swap), and leftovers are the box start's.

const PAST = () => new Date(Date.now() - 1000).toISOString();

function box(n: number): { dir: string; dbs: Db[] } {
  const dir = mkdtempSync(join(tmpdir(), 'cns-sync-owned-'));
  const dbs = Array.from({ length: n }, () => {
    const db = openDatabase(join(dir, 'cns.db'));
    // Sync states without their connections and projects: only the schedule matters here.
    db.pragma('foreign_keys = OFF');
    return db;
  });
  return { dir, dbs };
}

/** An active interval sync of `provider`, due now. */
function dueSync(db: Db, syncId: string, projectId: string, provider = 'elsewhere'): void {
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO sync_states (sync_id, project_id, provider, trigger_mode, status, interval_s, next_run_at, created_at, updated_at)
     VALUES (?, ?, ?, 'interval', 'active', 60, ?, ?, ?)`,
  ).run(syncId, projectId, provider, PAST(), now, now);
}

/** The metadata store of the process that holds `db` (a connection of its own to the same file), closed after the test. */
function metadataOf(t: ExecutionContext, db: Db): MetadataStore {
  const metadata = openSqliteMetadata(db.name);
  t.teardown(() => metadata.close());
  return metadata;
}

/** A runtime over `db` whose due syncs of provider 'elsewhere' are counted, not run. */
function runtime(t: ExecutionContext, db: Db, extra: Partial<SyncRuntimeDeps>, started: string[]): SyncRuntime {
  const metadata = metadataOf(t, db);
  const r = new SyncRuntime({
    metadata,
    store: new SyncStore(metadata),
    logger: createLogger('silent'),
    connectors: [],
    settings: () => ({ sync: { maxConcurrentRuns: 2, apiBase: {} }, urlFetchAllowPrivate: false, maxContentBytes: 1 << 20 }),
    // Not reached: no run is made here, the scheduler only starts them.
    connections: null as never,
    content: null as never,
    changelog: null as never,
    credentials: null as never,
    grants: null as never,
    convert: null as never,
    nodeId: null,
    ...extra,
  });
  r.scheduleElsewhere('elsewhere', async (syncId) => void started.push(syncId));
  return r;
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const nextRunAt = (db: Db, syncId: string) => (db.prepare('SELECT next_run_at FROM sync_states WHERE sync_id = ?').get(syncId) as { next_run_at: string }).next_run_at;

test('a due run is claimed by compare-and-swap: two processes that both read it due, one starts it', async (t) => {
  const { dir, dbs } = box(2);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  dueSync(dbs[0]!, 'syn_1', 'prj_a');
  const [a, b] = dbs.map((db) => runtime(t, db, {}, []));
  const [seenA, seenB] = [await a!.runs.due(new Date().toISOString(), 10), await b!.runs.due(new Date().toISOString(), 10)];
  t.is(seenA.length, 1);
  t.is(seenB.length, 1);
  const later = new Date(Date.now() + 60_000).toISOString();
  const wins = [await a!.runs.claimDue('syn_1', seenA[0]!.next_run_at!, later), await b!.runs.claimDue('syn_1', seenB[0]!.next_run_at!, later)];
  t.deepEqual(wins, [true, false]);
  t.is(nextRunAt(dbs[1]!, 'syn_1'), later);
  for (const db of dbs) db.close();
});

test('scheduled runs start on a worker that adopts the project, once across two workers; a worker leaves other projects due for their owner', async (t) => {
  const { dir, dbs } = box(2);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (let i = 0; i < 6; i++) dueSync(dbs[0]!, `syn_a${i}`, 'prj_a');
  dueSync(dbs[0]!, 'syn_b', 'prj_b');
  const before = nextRunAt(dbs[0]!, 'syn_b');
  const started: string[] = [];
  // Both workers would adopt prj_a (a hand-over); neither adopts prj_b.
  const workers = dbs.map((db) => runtime(t, db, { adopt: (p) => p === 'prj_a', recover: false }, started));
  for (const w of workers) await w.start();
  t.teardown(() => Promise.all(workers.map((w) => w.stop())));
  await until('the due syncs of prj_a', () => started.length >= 6);
  const waited = Date.now();
  await until('another look at the schedule', () => Date.now() - waited > 1200);
  t.deepEqual([...started].sort(), ['syn_a0', 'syn_a1', 'syn_a2', 'syn_a3', 'syn_a4', 'syn_a5'], 'each once, none of prj_b');
  t.is(nextRunAt(dbs[0]!, 'syn_b'), before, "prj_b's sync is still due, for its owner");
  for (const db of dbs) db.close();
});

test('a worker that is not the first of the box leaves runs going on elsewhere as they are; the box start marks them interrupted', async (t) => {
  const { dir, dbs } = box(1);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = dbs[0]!;
  dueSync(db, 'syn_1', 'prj_a', 'github');
  db.prepare('UPDATE sync_states SET next_run_at = NULL').run();
  const store = new SyncStore(metadataOf(t, db));
  const run = await store.insertRun(await store.require('syn_1'), { trigger: 'interval', status: 'running', cursorFrom: null, cursorBefore: null });
  const status = async () => (await store.findRun(run.id))!.status;

  const worker = runtime(t, db, { adopt: () => true, recover: false }, []);
  await worker.start();
  await worker.stop();
  t.is(await status(), 'running', 'its worker is alive');

  const first = runtime(t, db, {}, []);
  await first.start();
  await first.stop();
  t.is(await status(), 'interrupted');
  db.close();
});
