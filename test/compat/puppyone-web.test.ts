import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The routes PuppyOne's web front end calls beside the spec's (issue 32): a node's content
// (GET /nodes/{id}/content) and the project history (GET /collab/project-history/{id}), through HTTP.

let server: TestServer;
let token: string;
let pid: string;
let orgId: string;

test.before(async () => {
  server = await startTestServer({}, { CNS_PUPPYONE_COMPAT: 'on' });
  token = (await server.login()).token;
  ({ projectId: pid, orgId } = await defaultProject(server, token));
});
test.after.always(() => server.stop());

const call = (method: string, path: string, body?: unknown, as = token) => server.api(method, path, { token: as, body });
const documented = (t: import('ava').ExecutionContext, method: string, path: string, res: Awaited<ReturnType<TestServer['api']>>) =>
  assertDocumented(t, server.services, method, path, res);

test('GET /nodes/{id}/content: json as content_json, markdown as content_text, a file as a download address, a folder as nulls', async (t) => {
  const folder = (await call('POST', '/nodes/folder', { project_id: pid, name: 'c' })).body.data;
  const json = (await call('POST', '/nodes/json', { project_id: pid, parent_id: folder.id, name: 'c.json', content: { a: [1, 2] } })).body.data;
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, parent_id: folder.id, name: 'c.md', content: '# c' })).body.data;
  await call('PUT', `/nodes/${md.id}`, { content: '# c, second' });
  const bytes = Buffer.from([0, 1, 2, 250, 251]);
  const file = await call('POST', `/content/${pid}/write`, { path: 'c/c.bin', node_type: 'file', content: bytes.toString('base64') });
  t.is(file.status, 201, JSON.stringify(file.body));

  const j = await call('GET', `/nodes/${json.id}/content?project_id=${pid}`);
  documented(t, 'get', '/nodes/{nodeId}/content', j);
  t.like(j.body.data, { node_id: json.id, node_type: 'json', content_text: null, download_url: null, version: 1 });
  t.deepEqual(j.body.data.content_json, { a: [1, 2] });
  t.is(j.body.data.content_hash, (await call('GET', `/nodes/${json.id}`)).body.data.content_hash);

  const m = await call('GET', `/nodes/${md.id}/content`);
  documented(t, 'get', '/nodes/{nodeId}/content', m);
  t.like(m.body.data, { node_type: 'markdown', content_text: '# c, second', content_json: null, version: 2, size_bytes: Buffer.byteLength('# c, second') });

  const f = await call('GET', `/nodes/${file.body.data.id}/content`);
  documented(t, 'get', '/nodes/{nodeId}/content', f);
  t.like(f.body.data, { node_type: 'file', content_json: null, content_text: null, size_bytes: bytes.length });
  const down = await fetch(f.body.data.download_url);
  t.is(down.status, 200);
  t.deepEqual(Buffer.from(await down.arrayBuffer()), bytes);

  const d = await call('GET', `/nodes/${folder.id}/content`);
  documented(t, 'get', '/nodes/{nodeId}/content', d);
  t.like(d.body.data, { node_type: 'folder', content_hash: null, content_json: null, content_text: null, download_url: null });
});

test('GET /nodes/{id}/content goes through the content policy: unknown, other project, outside a key scope', async (t) => {
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, name: 'secret.md', content: 's' })).body.data;
  t.is((await call('GET', '/nodes/no-such-node/content')).status, 404);
  const other = await createProject(server, token, orgId, 'other-content');
  t.is((await call('GET', `/nodes/${md.id}/content?project_id=${other}`)).status, 404, 'project_id must be the node\'s');
  const stranger = await server.createUser('stranger-content@example.com');
  t.is((await call('GET', `/nodes/${md.id}/content`, undefined, stranger.token)).status, 404, "another user's project answers 404");
  await call('POST', `/content/${pid}/mkdir`, { path: 'scoped' });
  const key = await createKey(server, token, pid, { scope_path: 'scoped', mode: 'read' });
  const outside = await server.api('GET', `/nodes/${md.id}/content`, { headers: { 'x-access-key': key.key } });
  const neighbour = await server.api('GET', `/nodes/${md.id}`, { headers: { 'x-access-key': key.key } });
  t.false(outside.body.success);
  t.is(outside.status, neighbour.status, 'outside the key\'s scope: the same answer as GET /nodes/{id}');
  t.is(outside.body.code, neighbour.body.code);
  t.true(outside.status >= 400);
});

test('GET /collab/project-history/{id}: the first limit commits after since_version, newest first, with op on each change', async (t) => {
  const project = await createProject(server, token, orgId, 'history');
  const write = (body: unknown) => call('POST', `/content/${project}/write`, body);
  await write({ path: 'h/a.md', node_type: 'markdown', content: 'a', message: 'first' });
  await write({ path: 'h/a.md', node_type: 'markdown', content: 'a2', message: 'second' });
  await call('POST', `/content/${project}/mv`, { old_path: 'h/a.md', new_path: 'h/b.md' });
  await call('POST', `/content/${project}/rm`, { path: 'h/b.md' });
  const all = await call('GET', `/collab/project-history/${project}`);
  documented(t, 'get', '/collab/project-history/{projectId}', all);
  const h = all.body.data;
  t.is(h.project_id, project);
  t.is(h.current_version, 4);
  t.is(h.total, 4);
  t.deepEqual(h.commits.map((c: { version: number }) => c.version), [4, 3, 2, 1]);
  t.deepEqual(h.commits.map((c: { message: string }) => c.message).slice(2), ['second', 'first']);
  const ops = (c: { changes: { path: string; op: string }[] }) => c.changes.map((e) => `${e.op} ${e.path}`);
  t.deepEqual(ops(h.commits[3]), ['added h', 'added h/a.md'], 'the folder the write made, and the file');
  t.deepEqual(ops(h.commits[2]), ['modified h/a.md']);
  t.deepEqual(ops(h.commits[1]), ['modified h/b.md']);
  t.is(h.commits[0].changes[0].op, 'deleted');
  t.like(h.commits[0], { who: 'admin@example.com', scope_path: '', root_hash: null });
  t.deepEqual(h.commits[0].conflicts, []);

  // Their paging: since_version and limit take the oldest commits after it, answered newest first.
  const page = await call('GET', `/collab/project-history/${project}?since_version=1&limit=2`);
  documented(t, 'get', '/collab/project-history/{projectId}', page);
  t.deepEqual(page.body.data.commits.map((c: { version: number }) => c.version), [3, 2]);
  t.is((await call('GET', `/collab/project-history/${project}?since_version=4`)).body.data.total, 0);
  t.is((await call('GET', `/collab/project-history/${project}?limit=0`)).status, 422);

  // The same commits the project's own history lists.
  const ours = await call('GET', `/content/${project}/versions`);
  t.deepEqual(ours.body.data.commits.map((c: { commit_id: string }) => c.commit_id), h.commits.map((c: { commit_id: string }) => c.commit_id));
});

test('GET /collab/project-history/{id} is the caller\'s view: a scoped key sees its subtree, a stranger 404', async (t) => {
  const project = await createProject(server, token, orgId, 'history-scoped');
  await call('POST', `/content/${project}/write`, { path: 'in/x.md', node_type: 'markdown', content: 'x' });
  await call('POST', `/content/${project}/write`, { path: 'out/y.md', node_type: 'markdown', content: 'y' });
  const key = await createKey(server, token, project, { scope_path: 'in', mode: 'read' });
  const scoped = await server.api('GET', `/collab/project-history/${project}`, { headers: { 'x-access-key': key.key } });
  documented(t, 'get', '/collab/project-history/{projectId}', scoped);
  t.is(scoped.body.data.total, 1);
  t.deepEqual(scoped.body.data.commits[0].changes.map((e: { path: string }) => e.path), ['in', 'in/x.md']);
  t.is(scoped.body.data.commits[0].scope_path, 'in');
  const stranger = await server.createUser('stranger-history@example.com');
  t.is((await call('GET', `/collab/project-history/${project}`, undefined, stranger.token)).status, 404);
});

test('GET /nodes/batch keeps the spec\'s data.nodes (their client falls back to one read per node)', async (t) => {
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, name: 'batched.md', content: 'b' })).body.data;
  const res = await call('GET', `/nodes/batch?ids=${md.id},missing-id&project_id=${pid}`);
  documented(t, 'get', '/nodes/batch', res);
  t.false(Array.isArray(res.body.data));
  t.deepEqual(res.body.data.nodes.map((n: { id: string }) => n.id), [md.id]);
  t.deepEqual(res.body.data.missing, [{ id: 'missing-id', code: 'NOT_FOUND' }]);
});
