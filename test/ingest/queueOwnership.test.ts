import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { IngestQueue } from '../../src/ingest/queue/ingestQueue.ts';
import { TaskStore, type NewTask } from '../../src/ingest/queue/taskStore.ts';
import type { TaskRecord, TaskResult } from '../../src/ingest/queue/taskTypes.ts';
import { IngestTemp } from '../../src/ingest/queue/tempFiles.ts';

// The queue under several workers (issue 29), on a real SQLite file shared by two metadata
// connections as two worker processes would: a worker runs only tasks of projects it adopts,
// finds tasks queued elsewhere by polling, leaves recovery to the box's start, and a task is
// claimed once.

/** A data folder with projects prj_a, prj_b and prj_c, and `n` metadata connections to its database. */
async function box(n: number): Promise<{ dir: string; dbs: MetadataStore[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'cns-ingest-owned-'));
  openDatabase(join(dir, 'cns.db')).close();
  const dbs = Array.from({ length: n }, () => openSqliteMetadata(join(dir, 'cns.db')));
  const now = new Date().toISOString();
  await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'Org', ${now}, ${now})`.execute(dbs[0]!.db);
  for (const p of ['prj_a', 'prj_b', 'prj_c']) await sql`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES (${p}, 'org_1', ${p}, ${now}, ${now})`.execute(dbs[0]!.db);
  return { dir, dbs };
}

const DONE: TaskResult = { nodes: [], warnings: [], project_version: null };

let seq = 0;
function task(projectId: string): NewTask {
  const id = `task_${++seq}`;
  return {
    id,
    project_id: projectId,
    source: 'text',
    kind: 'file',
    target_path: 'in',
    mode: null,
    keep_original: false,
    rule_id: null,
    input: { file: 'a.txt', size: 1, mime_type: 'text/plain' },
    created_by: 'usr_test',
    actor: { type: 'user', id: 'usr_test' },
    created_at: new Date().toISOString(),
  } as unknown as NewTask;
}

/** Polls `check` until true, or fails after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a worker runs only queued tasks of projects it adopts; one it takes over runs, and tasks queued by another process are found by the poll', async (t) => {
  const { dir, dbs } = await box(2);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [mine, other] = [new TaskStore(dbs[0]!), new TaskStore(dbs[1]!)];
  const owned = new Set(['prj_a']);
  const ran: TaskRecord[] = [];
  const queue = new IngestQueue({
    store: mine,
    temp: new IngestTemp(dir, 'w1'),
    workers: 2,
    execute: async (x) => {
      ran.push(x);
      return DONE;
    },
    adopt: (p) => owned.has(p),
    recover: false,
    pollMs: 20,
  });
  const [a1, b1] = [task('prj_a'), task('prj_b')];
  await mine.insert([a1, b1]);
  await queue.start();
  t.teardown(() => queue.close());
  await until("prj_a's task", async () => (await mine.find(a1.id))?.status === 'succeeded');
  // Several polls later the other project's task is still queued, untouched.
  const polled = Date.now();
  await until('a few polls', () => Date.now() - polled > 100);
  t.is((await mine.find(b1.id))!.status, 'queued');
  t.deepEqual(ran.map((x) => x.id), [a1.id]);

  // Queued by another worker (a submit is served anywhere): the owner's poll finds it.
  const a2 = task('prj_a');
  await other.insert([a2]);
  await until('a task queued elsewhere', async () => (await mine.find(a2.id))?.status === 'succeeded');

  // This worker takes prj_b over: its queued task runs.
  owned.add('prj_b');
  await until("prj_b's task, once taken over", async () => (await mine.find(b1.id))?.status === 'succeeded');
  t.deepEqual(ran.map((x) => x.id), [a1.id, a2.id, b1.id]);
  await queue.close();
  for (const db of dbs) await db.close();
});

test('a worker that is not the first of the box leaves tasks running elsewhere and their files alone; it clears only its own uploads', async (t) => {
  const { dir, dbs } = await box(1);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new TaskStore(dbs[0]!);
  const temp = new IngestTemp(dir, 'w2');
  const running = task('prj_a');
  await store.insert([running]);
  t.is((await store.claimNext(null))!.id, running.id, 'running on another worker');
  writeFileSync(join(temp.ensureTaskDir(running.id), 'source'), 'the upload it works on');
  const theirs = join(temp.root, 'uploads', 'w1', 'u-reading');
  const mineLeft = join(temp.root, 'uploads', 'w2', 'u-left');
  mkdirSync(theirs, { recursive: true });
  mkdirSync(mineLeft, { recursive: true });

  const ran: string[] = [];
  const queue = new IngestQueue({ store, temp, workers: 1, execute: async (x) => (ran.push(x.id), DONE), adopt: () => true, recover: false });
  await queue.start();
  await queue.close();
  t.is((await store.find(running.id))!.status, 'running', 'not queued again: its worker is alive');
  t.true(existsSync(temp.taskDir(running.id)), "the running task's files stay");
  t.true(existsSync(theirs), "another worker's upload being read stays");
  t.false(existsSync(mineLeft), "this worker's own leftover upload is cleared");
  t.deepEqual(ran, []);

  // The box's first worker (or the one process) recovers: the task is queued again and runs.
  const recovering = new IngestQueue({ store, temp: new IngestTemp(dir), workers: 1, execute: async (x) => (ran.push(x.id), DONE) });
  await recovering.start();
  await until('the recovered task', async () => (await store.find(running.id))?.status === 'succeeded');
  t.deepEqual(ran, [running.id]);
  t.false(existsSync(theirs), 'the box start sweeps every upload folder');
  await recovering.close();
  await dbs[0]!.close();
});

test('a queued task is claimed by one process only (two connections claiming at once)', async (t) => {
  const { dir, dbs } = await box(2);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [a, b] = [new TaskStore(dbs[0]!), new TaskStore(dbs[1]!)];
  const tasks = Array.from({ length: 20 }, (_, i) => task(i % 2 ? 'prj_a' : 'prj_b'));
  await a.insert(tasks);
  const claimed: string[] = [];
  for (let i = 0; i < 15; i++) {
    const both = await Promise.all([a, b].map((s) => s.claimNext(null, new Map(), new Set(['prj_a', 'prj_b']))));
    for (const x of both) if (x) claimed.push(x.id);
  }
  t.is(claimed.length, 20);
  t.is(new Set(claimed).size, 20, 'no task claimed twice');
  t.is(await a.count('running'), 20);
  // `only` limits the claim to the projects given.
  const more = [task('prj_c')];
  await a.insert(more);
  t.is(await b.claimNext(null, new Map(), new Set(['prj_a'])), null);
  t.is((await b.claimNext(null, new Map(), new Set(['prj_c'])))!.id, more[0]!.id);
  for (const db of dbs) await db.close();
});
