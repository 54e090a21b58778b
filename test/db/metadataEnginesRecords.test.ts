import test from 'ava';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/auth/secretBox.ts';
import { DbConnectionStore } from '../../src/data/dbConnectors/dbConnectionStore.ts';
import { OAuthConnections } from '../../src/platform/oauth/oauthConnectionStore.ts';
import { PendingStates } from '../../src/platform/oauth/pendingStates.ts';
import { PublishStore } from '../../src/publish/publishStore.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

/** Publishes, OAuth connections and states, database connections: the same answers on SQLite and PostgreSQL. */

const box = () => new SecretBox(randomBytes(32), 'test');

for (const engine of ENGINES) {
  test(`${engine}: publishes: create, find by key, slug or many ids, update, a taken slug is a 409 (checked and by the index)`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new PublishStore(metadata);
    const base = { project_id: 'prj_1', node_id: 'nod_1', version: null, enabled: true, expires_at: null, created_by: 'usr_1' };
    const a = await store.create({ ...base, publish_key: 'pk_a', slug: 'docs' });
    const b = await store.create({ ...base, publish_key: 'pk_b', slug: null, version: 3 });
    t.like(await store.findByAddress('docs'), { id: a.id, enabled: true });
    t.like(await store.findByAddress('pk_b'), { id: b.id, version: 3 });
    t.deepEqual((await store.findMany([b.id, a.id, 'pub_none'])).map((p) => p.id).sort(), [a.id, b.id].sort());
    await t.throwsAsync(store.create({ ...base, publish_key: 'pk_c', slug: 'docs' }), { message: /already in use/ });
    const off = await store.update(b, { enabled: false, slug: 'guide' });
    t.like(await store.find(b.id), { enabled: false, slug: 'guide', updated_at: off.updated_at });
    // Two updates at once from the same read, of different fields: both stay.
    await Promise.all([store.update(off, { enabled: true }), store.update(off, { expires_at: '2030-01-01T00:00:00.000Z' })]);
    t.like(await store.find(b.id), { enabled: true, expires_at: '2030-01-01T00:00:00.000Z', slug: 'guide' });
    // The race the check cannot see: the unique index answers, and it is the same 409.
    const racing = new PublishStore(metadata);
    (racing as unknown as { findBy: () => Promise<null> }).findBy = async () => null;
    await t.throwsAsync(racing.create({ ...base, publish_key: 'pk_d', slug: 'guide' }), { message: /already in use/ });
    await store.delete(a);
    t.deepEqual((await store.listByProject('prj_1')).map((p) => p.id), [b.id]);
  });

  test(`${engine}: OAuth: a refresh stores its tokens only over the ones it refreshed; one that ends after a reconnect leaves the reconnect's`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const connections = new OAuthConnections(metadata, box());
    const c = { projectId: 'prj_1', provider: 'github', kind: 'oauth' as const, account: 'me', scopes: ['repo'], accessToken: 'at1', refreshToken: 'rt1', expiresAt: null, connectedBy: 'usr_1' };
    const { connection } = await connections.save(c);
    const refreshed = { accessToken: 'at1-refreshed', refreshToken: 'rt2', expiresAt: '2030-01-01T00:00:00.000Z', scopes: ['repo'] };
    t.true(await connections.updateTokens(connection.id, refreshed, 'at1'));
    t.like(await connections.find('prj_1', 'github'), { accessToken: 'at1-refreshed', refreshToken: 'rt2' });
    // The same refresh again (another process's, of the same old token): the first one stays.
    t.false(await connections.updateTokens(connection.id, { ...refreshed, accessToken: 'at1-again' }, 'at1'));
    // A reconnect while a refresh of the old grant is under way: the refresh ends after it and stores nothing.
    await connections.save({ ...c, accessToken: 'new-grant', refreshToken: 'new-rt' });
    t.false(await connections.updateTokens(connection.id, { ...refreshed, accessToken: 'stale' }, 'at1-refreshed'));
    t.like(await connections.find('prj_1', 'github'), { accessToken: 'new-grant', refreshToken: 'new-rt' });
    t.false(await connections.updateTokens('oac_none', refreshed, 'x'), 'a deleted connection');
  });

  test(`${engine}: OAuth: a reconnect keeps the row and clears needs_reauth; a state is taken once`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const connections = new OAuthConnections(metadata, box());
    const c = { projectId: 'prj_1', provider: 'github', kind: 'oauth' as const, account: 'me', scopes: ['repo'], accessToken: 'at1', refreshToken: 'rt1', expiresAt: null, connectedBy: 'usr_1' };
    const first = await connections.save(c);
    t.true(first.created);
    t.true(await connections.markNeedsReauth(first.connection.id));
    const again = await connections.save({ ...c, accessToken: 'at2' });
    t.false(again.created);
    t.like(await connections.find('prj_1', 'github'), { id: first.connection.id, accessToken: 'at2', refreshToken: 'rt1', needsReauth: false, scopes: ['repo'] });
    t.true(await connections.delete(first.connection.id));
    t.false(await connections.delete(first.connection.id));

    const states = new PendingStates(metadata, box());
    const state = { id: 'st_1', userId: 'usr_1', projectId: 'prj_1', provider: 'github', verifier: 'v'.repeat(43), redirectAfter: null, expiresAtMs: Date.now() + 60_000 };
    await states.add(state);
    const taken = await Promise.all([states.take('st_1'), states.take('st_1')]);
    t.is(taken.filter((s) => s !== null).length, 1, 'two callbacks at once: one wins');
    t.deepEqual(taken.find((s) => s !== null), state);
    await states.add({ ...state, id: 'st_old', expiresAtMs: Date.now() - 1 });
    t.is(await states.take('st_old'), null, 'expired');
  });

  test(`${engine}: database connections: the password sealed and opened, pages with a total, names unique per project`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new DbConnectionStore(metadata, box());
    const input = { project_id: 'prj_1', engine: 'postgres' as const, host: 'db.example', port: 5432, database: 'app', user: 'reader', ssl: 'require' as const, file: null, created_by: 'usr_1' };
    const a = await store.create({ ...input, name: 'a', password: 'pw' });
    await store.create({ ...input, name: 'b', password: null });
    t.like(await store.find(a.id), { user: 'reader', has_password: true, port: 5432 });
    t.is(await store.password((await store.find(a.id))!), 'pw');
    t.is(await store.idByName('prj_1', 'b'), (await store.list('prj_1', { limit: 10, offset: 0 })).items[1]!.id);
    const page = await store.list('prj_1', { limit: 1, offset: 1 });
    t.is(page.total, 2);
    t.deepEqual(page.items.map((c) => c.name), ['b']);
    await t.throwsAsync(store.create({ ...input, name: 'a', password: null }), { any: true });
    await store.delete(a.id);
    t.is(await store.find(a.id), null);
  });
}
