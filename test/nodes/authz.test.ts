import test from 'ava';
import { createKey } from '../helpers/project.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
const who: Record<string, string | undefined> = {};
let ids: { pub: string; pubDoc: string; priv: string; doc: string; snapshot: string };

test.before(async () => {
  f = await nodesFixture();
  const pub = await f.make('folder', 'public');
  const pubDoc = await f.make('markdown', 'doc.md', pub.id, 'public');
  const priv = await f.make('folder', 'private');
  const doc = await f.make('markdown', 'doc.md', priv.id, 'secret');
  const snapshot = (await f.call('GET', `/nodes/${priv.id}/snapshots`)).body.data.snapshots[0].snapshot_id;
  ids = { pub: pub.id, pubDoc: pubDoc.id, priv: priv.id, doc: doc.id, snapshot };

  const viewer = await f.server.createUser('viewer@example.com');
  await f.server.services.metadata.db.insertInto('org_members').values({ org_id: f.orgId, user_id: viewer.id, role: 'viewer', created_at: new Date().toISOString() }).execute();
  who.viewer = viewer.token;
  who.stranger = (await f.server.createUser('stranger@example.com')).token;
  who.readKey = (await createKey(f.server, f.token, f.pid, { mode: 'read' })).key;
  who.scopedKey = (await createKey(f.server, f.token, f.pid, { scope_path: 'public' })).key;
  who.none = undefined;
});
test.after.always(() => f.server.stop());

type Route = [method: string, path: () => string, body?: () => unknown];
const P = () => f.pid;
const reads: Route[] = [
  ['GET', () => `/nodes/?project_id=${P()}&parent_id=${ids.priv}`],
  ['GET', () => `/nodes/${ids.doc}`],
  ['GET', () => `/nodes/by-path?project_id=${P()}&path=private/doc.md`],
  ['GET', () => `/nodes/by-id-path/?project_id=${P()}&id_path=${ids.priv}/${ids.doc}`],
  ['GET', () => `/nodes/${ids.doc}/versions`],
  ['GET', () => `/nodes/${ids.doc}/versions/1`],
  ['GET', () => `/nodes/${ids.doc}/diff/1/1`],
  ['GET', () => `/nodes/${ids.doc}/download`],
  ['GET', () => `/nodes/${ids.priv}/snapshots`],
  ['GET', () => `/nodes/${ids.doc}/audit-logs?project_id=${P()}`],
  ['GET', () => `/collab/versions/${ids.doc}`],
  ['GET', () => `/collab/versions/${ids.doc}/1`],
  ['GET', () => `/collab/diff/${ids.doc}/1/1`],
  ['GET', () => `/collab/snapshots/${ids.priv}`],
  ['POST', () => '/collab/checkout', () => ({ project_id: P(), node_ids: [ids.doc] })],
];
const writes: Route[] = [
  ['POST', () => '/nodes/folder', () => ({ project_id: P(), parent_id: ids.priv, name: 'x' })],
  ['POST', () => '/nodes/json', () => ({ project_id: P(), parent_id: ids.priv, name: 'x.json', content: {} })],
  ['POST', () => '/nodes/markdown', () => ({ project_id: P(), parent_id: ids.priv, name: 'x.md', content: 'x' })],
  ['POST', () => '/nodes/bulk-create', () => ({ project_id: P(), parent_id: ids.priv, nodes: [{ name: 'y.md', type: 'markdown', content: 'y' }] })],
  ['POST', () => '/nodes/upload', () => ({ project_id: P(), parent_id: ids.priv, name: 'u.bin', size: 3 })],
  ['PUT', () => `/nodes/${ids.doc}`, () => ({ content: 'changed' })],
  ['POST', () => `/nodes/${ids.doc}/move`, () => ({ new_parent_id: null })],
  ['DELETE', () => `/nodes/${ids.doc}`],
  ['POST', () => `/nodes/${ids.doc}/rollback/1`],
  ['POST', () => `/collab/rollback/${ids.doc}/1`],
  ['POST', () => `/nodes/${ids.priv}/rollback-snapshot/${ids.snapshot}`],
  ['POST', () => `/collab/rollback-snapshot/${ids.priv}/${ids.snapshot}`],
  ['POST', () => '/collab/commit', () => ({ project_id: P(), mutations: [{ node_id: ids.doc, content: 'changed' }] })],
];

const expected: Record<string, { read: number; write: number }> = {
  none: { read: 401, write: 401 },
  stranger: { read: 404, write: 404 },
  viewer: { read: 200, write: 403 },
  readKey: { read: 200, write: 403 },
  scopedKey: { read: 403, write: 403 },
};

for (const [caller, want] of Object.entries(expected)) {
  test(`the matrix on every route: ${caller}`, async (t) => {
    const check = async ([method, path, body]: Route, status: number) => {
      const res = await f.server.api(method, path(), { token: who[caller], body: body?.() });
      t.is(res.status, status, `${caller} ${method} ${path()} → ${JSON.stringify(res.body).slice(0, 200)}`);
      if (status >= 400) t.false(res.body.success);
    };
    for (const r of reads) await check(r, want.read);
    for (const r of writes) await check(r, want.write);
    const doc = await f.call('GET', `/nodes/${ids.doc}`);
    t.is(doc.body.data.content, 'secret', 'nothing was written');
    t.is(doc.body.data.version, 1);
  });
}

test('batch reports unreadable ids instead of leaking them', async (t) => {
  const path = `/nodes/batch?ids=${ids.pubDoc},${ids.doc}`;
  t.is((await f.server.api('GET', path)).status, 401);
  const scoped = await f.server.api('GET', path, { token: who.scopedKey });
  t.deepEqual(scoped.body.data.nodes.map((n: { id: string }) => n.id), [ids.pubDoc]);
  t.deepEqual(scoped.body.data.missing, [{ id: ids.doc, code: 'FORBIDDEN' }]);
  const stranger = await f.server.api('GET', path, { token: who.stranger });
  t.deepEqual(stranger.body.data.nodes, []);
  t.deepEqual(stranger.body.data.missing.map((m: { code: string }) => m.code), ['NOT_FOUND', 'NOT_FOUND']);
});

test('a scoped key works inside its scope and sees only the way down at the root', async (t) => {
  const key = who.scopedKey;
  t.is((await f.server.api('GET', `/nodes/${ids.pubDoc}`, { token: key })).status, 200);
  const root = await f.server.api('GET', `/nodes/?project_id=${f.pid}`, { token: key });
  t.deepEqual(root.body.data.nodes.map((n: { name: string }) => n.name), ['public']);
  const made = await f.server.api('POST', '/nodes/markdown', { token: key, body: { project_id: f.pid, parent_id: ids.pub, name: 'bot.md', content: 'b' } });
  t.is(made.status, 201);
  const v = (await f.call('GET', `/nodes/${made.body.data.id}/versions`)).body.data.versions[0];
  t.is(v.actor_type, 'agent');
  t.is((await f.server.api('POST', `/nodes/${made.body.data.id}/move`, { token: key, body: { new_parent_id: ids.priv } })).status, 403, 'not out of its scope');
  t.is((await f.server.api('POST', '/nodes/markdown', { token: key, body: { project_id: f.pid, name: 'root.md', content: 'r' } })).status, 403);
});

test('a key scoped below a folder lists that folder showing only the way down', async (t) => {
  const inner = (await f.call('POST', '/nodes/folder', { project_id: f.pid, parent_id: ids.pub, name: 'inner' })).body.data;
  await f.call('POST', '/nodes/markdown', { project_id: f.pid, parent_id: inner.id, name: 'deep.md', content: 'd' });
  const { key } = await createKey(f.server, f.token, f.pid, { scope_path: 'public/inner', mode: 'read' });
  const listing = await f.server.api('GET', `/nodes/?project_id=${f.pid}&parent_id=${ids.pub}`, { token: key });
  t.is(listing.status, 200);
  t.deepEqual(listing.body.data.nodes.map((n: { name: string }) => n.name), ['inner'], 'doc.md beside it stays hidden');
  t.is((await f.server.api('GET', `/nodes/${ids.pubDoc}`, { token: key })).status, 403);
  const inside = await f.server.api('GET', `/nodes/?project_id=${f.pid}&parent_id=${inner.id}`, { token: key });
  t.deepEqual(inside.body.data.nodes.map((n: { name: string }) => n.name), ['deep.md']);
});
