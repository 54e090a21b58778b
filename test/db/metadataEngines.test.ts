import test from 'ava';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { AnalyticsStore } from '../../src/analytics/analyticsStore.ts';
import { SecretBox } from '../../src/auth/secretBox.ts';
import { runPostgresMigrations, SchemaNewerError } from '../../src/db/postgres/migrate.ts';
import { ProxyStore } from '../../src/mcp/proxy/proxyStore.ts';
import { DeliveryStore } from '../../src/webhooks/deliveryStore.ts';
import { HookStore } from '../../src/webhooks/hookStore.ts';
import { freshPostgresDatabase } from '../helpers/postgresDatabases.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

/** The stores already on the metadata store give the same answers on SQLite and PostgreSQL. */

for (const engine of ENGINES) {
  test(`${engine}: analytics adds batches (same keys summed, unknown projects skipped) and reads them back`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new AnalyticsStore(metadata);
    const count = (minute: number, nodeId: string, views: number, apiCalls: number, connectionId = '') => ({ projectId: 'prj_1', minute, publishId: '', connectionId, nodeId, views, apiCalls });
    await store.add(
      [count(100, 'nod_a', 1, 0), count(100, 'nod_a', 2, 0), count(101, 'nod_b', 0, 3, 'con_1'), count(160, 'nod_a', 0, 1), { ...count(100, 'nod_a', 9, 9), projectId: 'prj_gone' }],
      [
        { projectId: 'prj_1', minute: 100, publishId: '', nodeId: 'nod_a', visitor: 'v1' },
        { projectId: 'prj_1', minute: 100, publishId: '', nodeId: 'nod_a', visitor: 'v2' },
        { projectId: 'prj_gone', minute: 100, publishId: '', nodeId: 'nod_a', visitor: 'v3' },
      ],
    );
    // A second batch adds to the first; a visitor seen again is kept once.
    await store.add([count(100, 'nod_a', 1, 0)], [{ projectId: 'prj_1', minute: 100, publishId: '', nodeId: 'nod_a', visitor: 'v1' }]);
    const f = { projectId: 'prj_1', fromMinute: 0, toMinute: 1000 };
    t.deepEqual(await store.totals(f), { views: 4, apiCalls: 4, visitors: 2 });
    t.deepEqual(await store.buckets(f, 60), [
      { bucket: 60, views: 4, apiCalls: 3, visitors: 2 },
      { bucket: 120, views: 0, apiCalls: 1, visitors: 0 },
    ]);
    t.deepEqual(await store.top(f, 'node_id', 10), [
      { id: 'nod_a', views: 4, apiCalls: 1, visitors: 2 },
      { id: 'nod_b', views: 0, apiCalls: 3, visitors: 0 },
    ]);
    t.deepEqual(await store.top({ ...f, connectionId: 'con_1' }, 'connection_id', 10), [{ id: 'con_1', views: 0, apiCalls: 3, visitors: 0 }]);
    t.deepEqual((await store.nodes(f)).sort(), ['nod_a', 'nod_b']);
    t.deepEqual(await store.totals({ ...f, nodeIds: ['nod_b'] }), { views: 0, apiCalls: 3, visitors: 0 });
    t.deepEqual(await store.totals({ ...f, nodeIds: [] }), { views: 0, apiCalls: 0, visitors: 0 });
  });

  test(`${engine}: MCP proxy servers: create, read with headers opened, list in pages, rename, a taken name refused, delete`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new ProxyStore(metadata, new SecretBox(randomBytes(32), 'mcp-proxy-headers'));
    const a = await store.create({ project_id: 'prj_1', name: 'a', url: 'https://a.example/mcp', headers: { authorization: 'Bearer s3cret' }, created_by: 'usr_1' });
    await store.create({ project_id: 'prj_1', name: 'b', url: 'https://b.example/mcp', headers: {}, created_by: null });
    t.deepEqual((await store.find(a.id))?.headers, { authorization: 'Bearer s3cret' });
    t.is(await store.idByName('prj_1', 'a'), a.id);
    const page = await store.list('prj_1', { limit: 1, offset: 1 });
    t.is(page.total, 2);
    t.deepEqual(page.items.map((s) => s.name), ['b']);
    await t.throwsAsync(store.create({ project_id: 'prj_1', name: 'b', url: 'https://c.example/mcp', headers: {}, created_by: null }), { any: true }, 'the unique index refuses a second "b"');
    const renamed = await store.update(a, { name: 'c', headers: {} });
    t.like(await store.find(a.id), { name: 'c', headers: {}, updated_at: renamed.updated_at });
    await store.delete(a.id);
    t.is(await store.find(a.id), null);
  });

  test(`${engine}: webhooks: the cursor and the queue move together; heads in order, one claim wins, the log is pruned`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const hooks = new HookStore(metadata);
    const deliveries = new DeliveryStore(metadata);
    const hook = await hooks.create({ projectId: 'prj_1', url: 'https://h.example/', events: ['commit'], pathPrefix: '', active: true, creator: { kind: 'user', id: 'usr_1' }, cursor: 0, seal: (id) => `sealed:${id}` });
    const queued = (from: number, to: number) =>
      metadata.transaction(async (trx) => {
        if (!(await hooks.moveCursor(hook.id, from, to, trx))) return false;
        const events = Array.from({ length: to - from }, (_, i) => ({ hookId: hook.id, event: 'commit', projectVersion: from + i + 1, body: `{"v":${from + i + 1}}` }));
        await deliveries.insertAll(events, trx, 1_700_000_000_000);
        return true;
      });
    t.true(await queued(0, 450), 'past one INSERT of 400 rows');
    t.false(await queued(0, 3), 'a cursor that moved meanwhile: nothing queued twice');
    t.is((await hooks.find(hook.id))?.cursor, 450);
    t.is(await deliveries.pendingCount(hook.id), 450);
    const [head] = await deliveries.heads();
    t.like(head, { hook_id: hook.id, project_version: 1, project_id: 'prj_1', next_attempt_at: 1_700_000_000_000 });
    t.is(typeof head!.next_attempt_at, 'number', 'millisecond times are numbers on both');
    const claims = await Promise.all([deliveries.claim(head!.id, head!.next_attempt_at, 1_700_000_060_000), deliveries.claim(head!.id, head!.next_attempt_at, 1_700_000_060_000)]);
    t.deepEqual(claims.sort(), [false, true]);
    const done = await deliveries.recordAttempt(head!.id, { at: 1_700_000_001_000, ok: true, responseStatus: 204, responseBody: '', durationMs: 12, error: null }, null);
    t.like(done, { status: 'delivered', attempts: 1, first_attempt_at: 1_700_000_001_000 });
    t.is((await deliveries.heads())[0]?.project_version, 2, 'the next one in order');
    for (const d of (await deliveries.list(hook.id, { limit: 3, offset: 0, status: 'pending' })).items) {
      await deliveries.recordAttempt(d.id, { at: 1_700_000_002_000, ok: false, responseStatus: 500, responseBody: 'no', durationMs: 5, error: null }, null);
    }
    t.is(await deliveries.prune(hook.id, 2), 2, 'four finished, two kept');
    const log = await deliveries.list(hook.id, { limit: 10, offset: 0, status: 'failed' });
    t.is(log.total, 2);
    t.is(await deliveries.pendingCount(hook.id), 446, 'pending ones are never pruned');
  });

  test(`${engine}: a transaction that throws leaves nothing behind`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    await t.throwsAsync(
      metadata.transaction(async (trx) => {
        await trx.insertInto('analytics_salts').values({ day: 'd1', salt: 's' }).execute();
        throw new Error('refused');
      }),
      { message: 'refused' },
    );
    t.deepEqual(await metadata.db.selectFrom('analytics_salts').selectAll().execute(), []);
  });
}

test('postgres: migrations run once, and a database migrated by a newer cns is refused', async (t) => {
  const database = await freshPostgresDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  t.teardown(async () => {
    await pool.end();
    await database.drop();
  });
  t.deepEqual(await runPostgresMigrations(pool), [30, 31, 32, 33]);
  t.deepEqual(await runPostgresMigrations(pool), [], 'nothing to do the second time');
  await pool.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')");
  const error = await t.throwsAsync(runPostgresMigrations(pool), { instanceOf: SchemaNewerError });
  t.is(error?.message, 'the database was migrated by a newer cns (schema version 999); this cns knows up to 33');
});
