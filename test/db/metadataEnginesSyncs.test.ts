import test from 'ava';
import { sql } from 'kysely';
import type { MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { ItemStore, type ItemRow } from '../../src/platform/runtime/itemStore.ts';
import { CursorMoved, PlatformRunStore } from '../../src/platform/runtime/platformRunStore.ts';
import { WebhookDeliveries } from '../../src/platform/runtime/webhookDeliveries.ts';
import { SyncStore } from '../../src/sync/syncStore.ts';
import { ENGINES, metadataOn, type Engine } from '../helpers/metadataEngines.ts';

/** The syncs' stores give the same answers on SQLite and PostgreSQL. */

const NOW = '2026-01-01T00:00:00.000Z';

/** A sync's state, its `sync` connection first (sync_states.sync_id refers to it). */
async function syncOf(engine: Engine, metadata: MetadataStore, store: SyncStore, syncId: string, provider = 'github', projectId = 'prj_1') {
  await sql`INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at)
            VALUES (${syncId}, ${projectId}, 'sync', ${syncId}, 'read_write', ${`hash-${syncId}`}, 'cns_', ${NOW}, ${NOW})`.execute(metadata.db);
  return store.create({ syncId, projectId, provider, triggerMode: 'manual' });
}

const item = (sourceId: string, over: Partial<ItemRow> = {}): ItemRow => ({
  sourceId,
  nodeId: `nod_${sourceId}`,
  nodePath: `notes/${sourceId}.md`,
  path: `${sourceId}.md`,
  sourceVersion: '1',
  contentHash: `hash-${sourceId}`,
  meta: { n: 1 },
  ...over,
});

for (const engine of ENGINES) {
  test(`${engine}: sync states: create, read, list by project in order, pause with a reason, trigger, acks only move forward (no lost update)`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const a = await syncOf(engine, metadata, store, 'syn_a');
    const b = await syncOf(engine, metadata, store, 'syn_b', 'folder');
    t.deepEqual(await store.find('syn_a'), a);
    t.is(await store.find('syn_missing'), undefined);
    await t.throwsAsync(store.require('syn_missing'), { message: 'Sync not found.' });
    t.deepEqual((await store.listByProject('prj_1')).map((s) => s.sync_id), [a, b].sort((x, y) => x.created_at.localeCompare(y.created_at) || x.sync_id.localeCompare(y.sync_id)).map((s) => s.sync_id));
    t.deepEqual(await store.listByProject('prj_other'), []);

    t.like(await store.setStatus('syn_a', 'paused'), { status: 'paused', pause_reason: 'user' });
    t.like(await store.setStatus('syn_a', 'paused', 'needs_reauth'), { pause_reason: 'needs_reauth' });
    t.like(await store.setStatus('syn_a', 'active'), { status: 'active', pause_reason: null });
    t.like(await store.setTriggerMode('syn_b', 'watch'), { trigger_mode: 'watch' });

    t.is((await store.ack('syn_b', 5)).acked_cursor, 5);
    t.is((await store.ack('syn_b', 3)).acked_cursor, 5, 'a late ack does not rewind');
    await Promise.all([7, 12, 9, 11].map((c) => store.ack('syn_b', c)));
    t.is((await store.require('syn_b')).acked_cursor, 12, 'concurrent acks: the highest stays');
    t.is(typeof (await store.require('syn_b')).acked_cursor, 'number');
  });

  test(`${engine}: sync runs: newest first in pages, an open run interrupted by the next, counts added at once, finished, kept to the newest 500, gone with the sync`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const finished: string[] = [];
    store.onRunFinished((r) => void finished.push(r.id));
    const sync = await syncOf(engine, metadata, store, 'syn_a', 'folder');
    const first = await store.startRun(sync, 'client', 0);
    t.like(await store.openRun('syn_a', first.id), { status: 'running', cursor_from: 0 });
    t.truthy((await store.require('syn_a')).last_run_at);
    const second = await store.startRun(sync, 'client', 2);
    t.is((await store.findRun(first.id))?.status, 'interrupted', 'the client went away');
    await t.throwsAsync(store.openRun('syn_a', first.id), { message: `Run ${first.id} is already interrupted; start a new one.` });
    await t.throwsAsync(store.openRun('syn_other', second.id), { message: 'Run not found.' });
    await Promise.all([3, 4, 5].map((n) => store.countUp(second.id, n)));
    const done = await store.finishRun(second.id, { filesDown: 2, conflicts: ['x.md'], cursorTo: 9 });
    t.like(done, { status: 'succeeded', files_up: 12, files_down: 2, conflicts: '["x.md"]', errors: '[]', cursor_to: 9 });
    t.like(await store.finishRun((await store.startRun(sync, 'client', 9)).id, { errors: ['boom'] }), { status: 'failed', errors: '["boom"]' });
    t.is(finished.length, 2, 'listeners hear of every finished run');

    // Runs of one millisecond share started_at: ties go by id, newest first on both engines.
    for (let i = 0; i < 500; i++) await store.insertRun(sync, { trigger: 'client', status: 'succeeded', cursorFrom: i, cursorBefore: null });
    const all = await store.listRuns('syn_a', { limit: 1000, offset: 0 });
    t.is(all.total, 500, 'the oldest beyond 500 are dropped');
    t.false(all.items.some((r) => r.id === first.id || r.id === second.id));
    const sorted = [...all.items].sort((x, y) => y.started_at.localeCompare(x.started_at) || (y.id < x.id ? -1 : 1));
    t.deepEqual(all.items.map((r) => r.id), sorted.map((r) => r.id));
    const page = await store.listRuns('syn_a', { limit: 10, offset: 490 });
    t.deepEqual(page.items.map((r) => r.id), sorted.slice(490).map((r) => r.id));
    t.is(page.total, 500);
    t.is((await store.lastRun('syn_a'))?.id, sorted[0]!.id);

    await store.delete('syn_a');
    t.is(await store.find('syn_a'), undefined);
    t.is((await store.listRuns('syn_a', { limit: 10, offset: 0 })).total, 0);
    t.is(await store.lastRun('syn_a'), undefined);
  });

  test(`${engine}: platform runs and the schedule: queued, begun, finished; leftovers interrupted but not client runs; one claim of a due run wins`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const runs = new PlatformRunStore(metadata, store);
    const a = await syncOf(engine, metadata, store, 'syn_a');
    await syncOf(engine, metadata, store, 'syn_b');
    await syncOf(engine, metadata, store, 'syn_c', 'notion');

    const queued = await runs.queueRun(a, 'manual');
    t.like(queued, { status: 'queued', cursor_before: null });
    t.like(await runs.beginRun(queued.id, 'c0', 4), { status: 'running', cursor_before: 'c0', cursor_from: 4 });
    const summary = { created: 2, updated: 1, deleted: 1, pushed: 3, conflicts: ['a.md'], warnings: ['too big'], error: null, cursorAfter: 'c9', projectVersion: 7, httpCalls: 5, rateLimitedMs: 12.6 };
    t.like(await runs.finishPlatformRun(queued.id, summary), {
      status: 'succeeded',
      files_up: 3,
      files_down: 4,
      pulled_created: 2,
      cursor_after: 'c9',
      cursor_to: 7,
      http_calls: 5,
      rate_limited_ms: 13,
      errors: '["too big"]',
    });
    t.like(await runs.finishPlatformRun((await runs.queueRun(a, 'manual')).id, { ...summary, error: 'FORBIDDEN: no' }), { status: 'failed', errors: '["FORBIDDEN: no","too big"]' });

    const left = await runs.queueRun(a, 'interval');
    const client = await store.startRun(a, 'client', 0);
    t.is(await runs.interruptLeftovers('stopped'), 1);
    t.like(await store.findRun(left.id), { status: 'interrupted', errors: '["stopped"]' });
    t.is((await store.findRun(client.id))?.status, 'running', "a client's run is its client's");

    t.is(await runs.nextDue(), null);
    const at = (s: number) => new Date(Date.parse(NOW) + s * 1000).toISOString();
    await runs.setTrigger('syn_a', { mode: 'interval', intervalS: 60, nextRunAt: at(30), webhookSecret: null });
    t.like(await runs.setTrigger('syn_b', { mode: 'interval', intervalS: 60, nextRunAt: at(10), webhookSecret: null }), { trigger_mode: 'interval', interval_s: 60, next_run_at: at(10) });
    await runs.setTrigger('syn_c', { mode: 'interval', intervalS: 60, nextRunAt: at(5), webhookSecret: null });
    await store.setStatus('syn_c', 'paused');
    t.is(await runs.nextDue(), at(10), 'paused syncs are not due');
    t.deepEqual((await runs.due(at(40), 10)).map((s) => s.sync_id), ['syn_b', 'syn_a'], 'soonest first');
    t.deepEqual((await runs.due(at(40), 1)).map((s) => s.sync_id), ['syn_b']);
    t.deepEqual(await runs.due(at(0), 10), []);
    const wins = await Promise.all([runs.claimDue('syn_b', at(10), at(70)), runs.claimDue('syn_b', at(10), at(71))]);
    t.deepEqual([...wins].sort(), [false, true], 'one claim of the due run');
    t.false(await runs.claimDue('syn_c', at(5), at(65)), 'a paused sync is not claimed');
    await runs.setNextRunAt('syn_a', null);
    t.deepEqual((await runs.due(at(40), 10)).map((s) => s.sync_id), []);
    t.deepEqual((await runs.listByProvider('prj_1', 'github')).map((s) => s.sync_id).sort(), ['syn_a', 'syn_b']);
  });

  test(`${engine}: a page's items and cursor: journaled, stored by compare-and-set on the old cursor (a moved one stores nothing), the journal dropped only as it was`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const runs = new PlatformRunStore(metadata, store);
    const items = new ItemStore(metadata);
    await syncOf(engine, metadata, store, 'syn_a');

    const page1 = { from: null, cursor: 'c1', rows: [item('a'), item('b', { nodeId: null })], removed: [], after: 0 };
    t.true(await runs.journalPage('syn_a', page1));
    t.deepEqual(JSON.parse((await store.require('syn_a')).pending_page!), page1);
    await runs.recordPage('syn_a', page1);
    t.like(await store.require('syn_a'), { source_cursor: 'c1', pending_page: null });
    t.deepEqual([...(await items.load('syn_a')).values()], page1.rows);

    // Another run stored its page meanwhile: this one's cursor is stale.
    t.false(await runs.journalPage('syn_a', { ...page1, from: 'c0' }));
    await t.throwsAsync(runs.recordPage('syn_a', { from: null, cursor: 'c2', rows: [item('z')], removed: ['a'] }), { instanceOf: CursorMoved });
    t.is((await store.require('syn_a')).source_cursor, 'c1');
    t.deepEqual([...(await items.load('syn_a')).keys()].sort(), ['a', 'b'], 'nothing of the refused page');

    const both = await Promise.allSettled([
      runs.recordPage('syn_a', { from: 'c1', cursor: 'c2', rows: [item('c')], removed: ['a'] }),
      runs.recordPage('syn_a', { from: 'c1', cursor: 'c2x', rows: [item('d')], removed: [] }),
    ]);
    t.deepEqual(both.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const after = await store.require('syn_a');
    const kept = [...(await items.load('syn_a')).keys()].sort();
    t.true(after.source_cursor === 'c2' ? kept.join() === 'b,c' : after.source_cursor === 'c2x' && kept.join() === 'a,b,d', 'two pages from one cursor at once: one is stored, whole');

    const pending = JSON.stringify({ from: after.source_cursor, cursor: 'c3', rows: [], removed: [], after: 0 });
    t.true(await runs.journalPage('syn_a', JSON.parse(pending)));
    await runs.dropPendingPage('syn_a', '{"other":true}');
    t.not((await store.require('syn_a')).pending_page, null, 'another journal is not dropped');
    await runs.dropPendingPage('syn_a', (await store.require('syn_a')).pending_page!);
    t.is((await store.require('syn_a')).pending_page, null);

    await runs.recordPush('syn_a', { rows: [item('b', { sourceVersion: '2', nodeId: 'nod_b' })], removed: [...kept.filter((k) => k !== 'b')], localCursor: 11 });
    t.is((await store.require('syn_a')).local_cursor, 11);
    t.deepEqual([...(await items.load('syn_a')).values()], [item('b', { sourceVersion: '2', nodeId: 'nod_b' })]);
  });

  test(`${engine}: the item map: many rows written in parts, replaced by source id (the last of a repeated one counts), removed, counted, forgotten`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const items = new ItemStore(metadata);
    await syncOf(engine, metadata, store, 'syn_a');
    await syncOf(engine, metadata, store, 'syn_b');
    const many = Array.from({ length: 1234 }, (_, i) => item(`i${i}`));
    await items.put('syn_a', many);
    await items.put('syn_b', [item('i0')]);
    t.is(await items.count('syn_a'), 1234);
    await items.put('syn_a', [item('i1', { path: 'old.md' }), item('i1', { path: 'moved.md', meta: { deep: { x: [1] } }, contentHash: null })]);
    const loaded = await items.load('syn_a');
    t.deepEqual(loaded.get('i1'), item('i1', { path: 'moved.md', meta: { deep: { x: [1] } }, contentHash: null }));
    t.is(loaded.size, 1234);
    await items.remove('syn_a', many.slice(0, 1000).map((i) => i.sourceId));
    await items.remove('syn_a', []);
    t.is(await items.count('syn_a'), 234);
    t.is(await items.count('syn_b'), 1, "another sync's items stay");
    await items.forget('syn_a');
    t.is(await items.count('syn_a'), 0);
    t.is(typeof (await items.count('syn_b')), 'number');
  });

  test(`${engine}: webhook deliveries: a repeat by id or by digest is a duplicate with its run; one of two claims at once wins; bounded by age and count (newest kept)`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    await syncOf(engine, metadata, store, 'syn_a');
    await syncOf(engine, metadata, store, 'syn_b');
    let clock = 1_000_000;
    const deliveries = new WebhookDeliveries(metadata, () => ({ maxPerSync: 3, maxAgeMs: 60_000 }), () => clock);
    t.deepEqual(await deliveries.claim('syn_a', 'g1', 'd1'), { duplicate: false });
    t.deepEqual(await deliveries.claim('syn_a', 'g1', 'd-other'), { duplicate: true, runId: null }, 'the same delivery id');
    await deliveries.attachRun('syn_a', 'd1', 'run_1');
    t.deepEqual(await deliveries.claim('syn_a', 'g-new', 'd1'), { duplicate: true, runId: 'run_1' }, 'the same body and signature under a new id');
    t.deepEqual(await deliveries.claim('syn_a', null, 'd1'), { duplicate: true, runId: 'run_1' });
    t.deepEqual(await deliveries.claim('syn_b', 'g1', 'd1'), { duplicate: false }, 'per sync');

    const racing = await Promise.all([deliveries.claim('syn_a', 'g2', 'd2'), deliveries.claim('syn_a', 'g2', 'd2'), deliveries.claim('syn_a', null, 'd2')]);
    t.is(racing.filter((c) => !c.duplicate).length, 1, 'one of the claims at once starts a run');

    // Same millisecond: the newest by seq are kept.
    for (const d of ['d3', 'd4', 'd5']) t.false((await deliveries.claim('syn_a', null, d)).duplicate);
    t.is(await deliveries.count('syn_a'), 3);
    t.false((await deliveries.claim('syn_a', null, 'd2')).duplicate, 'the oldest were forgotten');
    t.true((await deliveries.claim('syn_a', null, 'd5')).duplicate);
    await deliveries.release('syn_a', 'd5');
    t.false((await deliveries.claim('syn_a', null, 'd5')).duplicate, 'a released delivery may come again');

    clock += 61_000;
    t.false((await deliveries.claim('syn_a', 'g1', 'd1')).duplicate, 'past the age bound');
    t.is(await deliveries.count('syn_a'), 1);
    t.is(await deliveries.count('syn_b'), 1);
    await store.delete('syn_b');
    t.is(await deliveries.count('syn_b'), 0, 'gone with the sync');
  });
}
