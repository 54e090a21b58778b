import test from 'ava';
import { request } from 'node:http';
import { createKey } from '../helpers/project.ts';
import { addOrgMember } from '../api/fixtures.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

/**
 * Issue 9, items 2 and 19: an upload address writes at most once, only for a holder who still
 * has access, only to the target it was issued for; and it can add a version to a file node.
 */
let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

async function announce(body: Record<string, unknown>, token = f.token) {
  const res = await f.call('POST', '/nodes/upload', { project_id: f.pid, ...body }, token);
  if (res.status !== 201) throw new Error(`upload request: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { upload_url: string; node_id: string; path: string; base_version: number };
}

async function put(url: string, body: string | Buffer) {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });
  return { status: res.status, body: (await res.json()) as any };
}

const cat = (path: string) => f.call('GET', `/content/${f.pid}/cat?path=${encodeURIComponent(path)}`);
const versionsOf = async (id: string) => (await f.call('GET', `/nodes/${id}/versions`)).body.data.total as number;

test('a node that appeared at the target path is not overwritten: 409, nothing written, and replays write nothing either', async (t) => {
  const up = await announce({ name: 'race.md', size: 5 });
  const md = await f.make('markdown', 'race.md', null, '# mine');
  for (let i = 0; i < 3; i++) {
    const res = await put(up.upload_url, 'bytes');
    t.is(res.status, 409, `attempt ${i}`);
    t.false(res.body.success);
    t.is(res.body.error.code, 'CONFLICT');
  }
  const now = (await f.call('GET', `/nodes/${md.id}`)).body.data;
  t.is(now.type, 'markdown');
  t.is(now.content, '# mine');
  t.is(now.version, 1);
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404);
});

test('an address is used up by its PUT: a replay after success, or after the node was deleted permanently, writes nothing', async (t) => {
  const up = await announce({ name: 'once.bin', size: 3 });
  t.is((await put(up.upload_url, 'one')).status, 201);
  const again = await put(up.upload_url, 'two');
  t.is(again.status, 403);
  t.is(again.body.error.code, 'FORBIDDEN');
  t.is(await versionsOf(up.node_id), 1);

  const rm = await f.call('POST', `/content/${f.pid}/rm`, { path: 'once.bin', permanent: true });
  t.is(rm.status, 200);
  t.is((await put(up.upload_url, 'one')).status, 403);
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404, 'the node does not come back');
  t.is((await cat('once.bin')).status, 404);
});

test('two PUTs of one address at once: exactly one writes', async (t) => {
  const up = await announce({ name: 'twice.bin', size: 4 });
  const results = await Promise.all([put(up.upload_url, 'aaaa'), put(up.upload_url, 'bbbb'), put(up.upload_url, 'cccc')]);
  t.is(results.filter((r) => r.status === 201).length, 1, JSON.stringify(results.map((r) => r.status)));
  t.is(await versionsOf(up.node_id), 1);
});

test('the holder is authorized again at PUT: a removed member and a deleted key write nothing', async (t) => {
  const member = await f.server.createUser(`uploader-${process.pid}@example.com`);
  await addOrgMember(f.server, f.orgId, member.id, 'member');
  const byMember = await announce({ name: 'member.bin', size: 1 }, member.token);
  const removed = await f.call('DELETE', `/organizations/${f.orgId}/members/${member.id}`);
  t.is(removed.status, 200, JSON.stringify(removed.body));
  const res = await put(byMember.upload_url, 'm');
  t.is(res.status, 403);
  t.is(res.body.error.code, 'FORBIDDEN');
  t.is((await cat('member.bin')).status, 404);

  const key = await createKey(f.server, f.token, f.pid, { name: 'uploader' });
  const byKey = await announce({ name: 'key.bin', size: 1 }, key.key);
  t.is((await f.call('DELETE', `/connections/${key.id}`)).status, 200);
  t.is((await put(byKey.upload_url, 'k')).status, 403);
  t.is((await cat('key.bin')).status, 404);
});

test('a target folder moved since the address was issued (here out of the key\'s scope): refused, nothing written', async (t) => {
  const inbox = await f.make('folder', 'inbox');
  const sub = await f.make('folder', 'sub', inbox.id);
  const key = await createKey(f.server, f.token, f.pid, { name: 'scoped', scope_path: 'inbox' });
  const up = await announce({ parent_id: sub.id, name: 'f.bin', size: 1 }, key.key);
  t.is(up.path, 'inbox/sub/f.bin');
  t.is((await f.call('POST', `/nodes/${sub.id}/move`, { new_parent_id: null })).status, 200);
  const res = await put(up.upload_url, 'x');
  t.true(res.status === 403 || res.status === 409, String(res.status));
  t.false(res.body.success);
  t.is((await cat('sub/f.bin')).status, 404);
  t.is((await cat('inbox/sub/f.bin')).status, 404);

  // Moved within reach but elsewhere: 409 for the owner as well.
  const box = await f.make('folder', 'box');
  const own = await announce({ parent_id: box.id, name: 'g.bin', size: 1 });
  t.is((await f.call('PUT', `/nodes/${box.id}`, { name: 'box2' })).status, 200);
  const moved = await put(own.upload_url, 'y');
  t.is(moved.status, 409);
  t.regex(moved.body.message, /changed/);
  t.is((await cat('box2/g.bin')).status, 404);
});

test('node_id: an upload address adds a version to an existing file node; a stale one answers 409', async (t) => {
  const first = await announce({ name: 'big.bin', size: 3 });
  t.is((await put(first.upload_url, 'v-1')).status, 201);

  const up = await announce({ node_id: first.node_id, size: 5 });
  t.is(up.node_id, first.node_id);
  t.is(up.path, 'big.bin');
  t.is(up.base_version, 1);
  const res = await put(up.upload_url, 'v-two');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.data.id, first.node_id);
  t.is(res.body.data.version, 2);
  t.is(res.body.data.size, 5);
  const dl = (await f.call('GET', `/nodes/${first.node_id}/download`)).body.data.download_url as string;
  t.is(await (await fetch(dl)).text(), 'v-two');

  // Another version lands between the address and its PUT: 409, nothing written.
  const stale = await announce({ node_id: first.node_id, size: 1 });
  const other = await announce({ node_id: first.node_id, size: 1 });
  t.is((await put(other.upload_url, '3')).status, 200);
  const late = await put(stale.upload_url, '4');
  t.is(late.status, 409);
  t.is(await versionsOf(first.node_id), 3);

  // Only file nodes, and name/parent_id do not go with node_id.
  const md = await f.make('markdown', 'doc.md', null, 'text');
  const notFile = await f.call('POST', '/nodes/upload', { project_id: f.pid, node_id: md.id, size: 1 });
  t.is(notFile.status, 422);
  t.is(notFile.body.error.details[0].field, 'node_id');
  const both = await f.call('POST', '/nodes/upload', { project_id: f.pid, node_id: first.node_id, name: 'x.bin', size: 1 });
  t.is(both.status, 422);
  t.is(both.body.error.details[0].field, 'name');
  const taken = await f.call('POST', '/nodes/upload', { project_id: f.pid, name: 'big.bin', size: 1 });
  t.is(taken.status, 409);
  t.regex(taken.body.message, /node_id/);
});

test('the check that counts runs in the commit: a node created while the body streams is not overwritten (409)', async (t) => {
  const size = 16 * 1024 * 1024;
  const up = await announce({ name: 'slow.md', size });
  const chunk = Buffer.alloc(1024 * 1024, 7);
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(up.upload_url, { method: 'PUT', headers: { 'content-length': size } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    let sent = 0;
    const rest = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', rest);
      }
      req.end();
    };
    // Fill the socket until the server has to read (so its up-front checks have passed), then
    // create the node at the target path, then send the rest of the body.
    const fill = () => {
      while (req.write(chunk)) sent += chunk.length;
      sent += chunk.length;
      req.once('drain', () => {
        f.make('markdown', 'slow.md', null, '# created meanwhile').then(rest, reject);
      });
    };
    fill();
  });
  const res = await answer;
  t.is(res.status, 409, JSON.stringify(res.body));
  t.is(res.body.error.code, 'CONFLICT');
  const md = await cat('slow.md');
  t.is(md.body.data.type, 'markdown');
  t.is(md.body.data.content, '# created meanwhile');
  t.is(md.body.data.version, 1);
});
