import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '../../src/auth/secretBox.ts';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { DeliveryStore, type AttemptOutcome } from '../../src/webhooks/deliveryStore.ts';
import { Dispatcher, type DispatcherSettings } from '../../src/webhooks/dispatcher.ts';
import { HookStore } from '../../src/webhooks/hookStore.ts';
import type { Attempt } from '../../src/webhooks/sender.ts';

// Webhooks under several workers (issue 29), on one SQLite file shared by two connections as two
// worker processes would: a worker sends only deliveries of projects it adopts, a delivery's
// attempt and a hook's cursor are claimed by compare-and-swap, so nothing is sent or queued twice.

const SETTINGS: DispatcherSettings = { timeoutMs: 1000, backoffMs: 20, backoffMaxMs: 50, retryForMs: 60_000, disableAfterMs: 60_000, concurrency: 4, keepDeliveries: 100 };
const secret = randomBytes(32);
const box = new SecretBox(secret, 'webhooks');

async function dbs(t: { teardown(fn: () => unknown): void }, n: number): Promise<MetadataStore[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cns-webhooks-owned-'));
  openDatabase(join(dir, 'cns.db')).close(); // migrated
  const stores = Array.from({ length: n }, () => openSqliteMetadata(join(dir, 'cns.db')));
  t.teardown(async () => {
    for (const m of stores) await m.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Hooks without their projects and creators: only the queue matters here.
  for (const m of stores) await sql`PRAGMA foreign_keys = OFF`.execute(m.db);
  return stores;
}

function hook(db: MetadataStore, projectId: string) {
  return new HookStore(db).create({
    projectId,
    url: 'https://receiver.test/hook',
    events: ['content.created'],
    pathPrefix: '',
    active: true,
    seal: (id) => box.seal(randomBytes(32), id),
    creator: { kind: 'user', id: 'usr_test' },
    cursor: 0,
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a worker sends only deliveries of projects it adopts; one it takes over is sent by its poll', async (t) => {
  const [db] = await dbs(t, 1);
  const [ha, hb] = [await hook(db!, 'prj_a'), await hook(db!, 'prj_b')];
  const deliveries = new DeliveryStore(db!);
  const da = await deliveries.insert({ hookId: ha.id, event: 'content.created', projectVersion: 1, body: '{}' });
  const dbb = await deliveries.insert({ hookId: hb.id, event: 'content.created', projectVersion: 1, body: '{}' });
  const owned = new Set(['prj_a']);
  const sent: string[] = [];
  const send = async (a: Attempt): Promise<AttemptOutcome> => {
    sent.push(a.deliveryId);
    return { at: Date.now(), ok: true, responseStatus: 200, responseBody: 'ok', durationMs: 1, error: null };
  };
  const dispatcher = new Dispatcher({ hooks: new HookStore(db!), deliveries, box, settings: () => SETTINGS, allowPrivate: () => false, logger: createLogger('silent'), send, adopt: (p) => owned.has(p), pollMs: 20 });
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  await until("prj_a's delivery", async () => (await deliveries.find(da.id))!.status === 'delivered');
  const waited = Date.now();
  await until('a few polls', () => Date.now() - waited > 100);
  t.like(await deliveries.find(dbb.id), { status: 'pending', attempts: 0 });
  owned.add('prj_b');
  await until("prj_b's delivery, once taken over", async () => (await deliveries.find(dbb.id))!.status === 'delivered');
  t.deepEqual(sent, [da.id, dbb.id]);
});

test("a delivery's attempt is claimed by compare-and-swap: two workers that read it due, one sends it", async (t) => {
  const two = await dbs(t, 2);
  const h = await hook(two[0]!, 'prj_a');
  const [a, b] = two.map((db) => new DeliveryStore(db));
  const d = await a!.insert({ hookId: h.id, event: 'content.created', projectVersion: 1, body: '{}' });
  const [headA, headB] = [(await a!.heads())[0]!, (await b!.heads())[0]!];
  t.is(headA.project_id, 'prj_a');
  const claimedUntil = Date.now() + 61_000;
  t.deepEqual([await a!.claim(d.id, headA.next_attempt_at, claimedUntil), await b!.claim(d.id, headB.next_attempt_at, claimedUntil)], [true, false]);
  t.is((await b!.find(d.id))!.next_attempt_at, claimedUntil, 'not due for anyone else while the attempt lasts');
});

test("a hook's cursor moves by compare-and-swap: commits queued by one worker are not queued again by another", async (t) => {
  const two = await dbs(t, 2);
  const h = await hook(two[0]!, 'prj_a');
  const [a, b] = two.map((db) => new HookStore(db));
  t.true(await a!.moveCursor(h.id, 0, 5));
  t.false(await b!.moveCursor(h.id, 0, 5), 'read at 0, but another worker moved it');
  t.true(await b!.moveCursor(h.id, 5, 7));
  t.is((await a!.find(h.id))!.cursor, 7);
});
