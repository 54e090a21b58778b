import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { type ContentCall, contentApi, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The answers and requests of the path surface that PuppyOne's `data` and path `fs` command lines
// read and send (issue 32), through HTTP. Each answer is also checked against its documented schema.

let server: TestServer;
let token: string;
let pid: string;
let orgId: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer({}, { CNS_PUPPYONE_COMPAT: 'on' });
  token = (await server.login()).token;
  ({ projectId: pid, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, pid);
});
test.after.always(() => server.stop());

const documented = (t: import('ava').ExecutionContext, method: string, route: string, res: Awaited<ReturnType<TestServer['api']>>) =>
  assertDocumented(t, server.services, method, `/content/{projectId}${route}`, res);

test('login answers user_email beside user', async (t) => {
  const res = await server.api('POST', '/auth/login', { body: { email: 'admin@example.com', password: 'admin-password-1' } });
  t.is(res.body.data.user_email, 'admin@example.com');
  t.is(res.body.data.user_email, res.body.data.user.email);
  assertDocumented(t, server.services, 'post', '/auth/login', res);
});

test('ls gives size_bytes, stat answers exists with content_hash, tree a flat entries list', async (t) => {
  await c('POST', '/write', { path: 'ls/a/deep.md', content: '# deep\n', node_type: 'markdown' });
  await c('POST', '/write', { path: 'ls/b.json', content: { x: 1 }, node_type: 'json' });

  const ls = await c('GET', '/ls?path=ls');
  documented(t, 'get', '/ls', ls);
  const b = ls.body.data.entries.find((e: { name: string }) => e.name === 'b.json');
  t.is(b.size_bytes, b.size);
  t.true(b.size_bytes > 0);

  const stat = await c('GET', '/stat?path=ls/b.json');
  documented(t, 'get', '/stat', stat);
  t.true(stat.body.data.exists);
  t.regex(stat.body.data.content_hash, /^[0-9a-f]{40}$/);
  const missing = await c('GET', '/stat?path=ls/none.md');
  t.is(missing.status, 404, 'a missing path stays 404 (the spec), not exists: false');

  const tree = await c('GET', '/tree?path=ls');
  documented(t, 'get', '/tree', tree);
  t.deepEqual(
    tree.body.data.entries.map((e: { path: string }) => e.path),
    ['ls/a', 'ls/a/deep.md', 'ls/b.json'],
  );
  t.false('children' in tree.body.data.entries[0], 'flat entries carry no children');
  t.is(tree.body.data.children.length, 2, 'our nested shape is still there');
});

test('mv answers old_path and new_path; move {src, dst} is the same move', async (t) => {
  await c('POST', '/write', { path: 'mv/one.md', content: '1', node_type: 'markdown' });
  const mv = await c('POST', '/mv', { old_path: 'mv/one.md', new_path: 'mv/two.md' });
  documented(t, 'post', '/mv', mv);
  t.is(mv.body.data.old_path, 'mv/one.md');
  t.is(mv.body.data.new_path, 'mv/two.md');
  const move = await c('POST', '/move', { src: 'mv/two.md', dst: 'mv/three.md' });
  documented(t, 'post', '/move', move);
  t.is(move.body.data.new_path, 'mv/three.md');
  t.is((await c('GET', '/stat?path=mv/two.md')).status, 404);
  t.is((await c('GET', '/cat?path=mv/three.md')).body.data.content, '1');
});

test('soft rm answers new_path under .trash and the version; trash lists entries; restore derives the place', async (t) => {
  await c('POST', '/write', { path: 'trash/keep/note.md', content: 'n', node_type: 'markdown' });
  const rm = await c('POST', '/rm', { path: 'trash/keep/note.md' });
  documented(t, 'post', '/rm', rm);
  t.regex(rm.body.data.new_path, /^\.trash\/.+_note\.md$/);
  t.is(rm.body.data.new_path, rm.body.data.trash_path);
  t.is(rm.body.data.old_path, 'trash/keep/note.md');
  t.is(rm.body.data.version, rm.body.data.project_version);
  t.true(rm.body.data.version > 0);

  const trash = await c('GET', '/trash');
  documented(t, 'get', '/trash', trash);
  const entry = trash.body.data.entries.find((e: { path: string }) => e.path === rm.body.data.new_path);
  t.truthy(entry, 'the trash lists the item by its .trash/ path');

  // No original_path: back where it was deleted from.
  const restored = await c('POST', '/restore', { trash_path: entry.path });
  documented(t, 'post', '/restore', restored);
  t.is(restored.body.data.path, 'trash/keep/note.md');
  t.is(restored.body.data.new_path, 'trash/keep/note.md');
  t.is(restored.body.data.old_path, entry.path);
  t.is((await c('GET', '/cat?path=trash/keep/note.md')).body.data.content, 'n');
});

test('bulk-write answers total and the version', async (t) => {
  const res = await c('POST', '/bulk-write', {
    files: [
      { path: 'bulk/a.md', content: 'a', node_type: 'markdown' },
      { path: 'bulk/b.json', content: { b: true }, node_type: 'json' },
    ],
    message: null,
  });
  documented(t, 'post', '/bulk-write', res);
  t.is(res.body.data.total, 2);
  t.is(res.body.data.version, res.body.data.project_version);
  t.true(res.body.data.version > 0);
});

test('versions?path= lists commits with version, who, message, created_at; audit logs carry operator_type and created_at', async (t) => {
  await c('POST', '/write', { path: 'hist/h.md', content: 'v1', node_type: 'markdown', message: 'first' });
  const second = await c('POST', '/write', { path: 'hist/h.md', content: 'v2', node_type: 'markdown', message: 'second' });
  const versions = await c('GET', '/versions?path=hist/h.md');
  documented(t, 'get', '/versions', versions);
  const [newest, oldest] = versions.body.data.commits;
  t.is(newest.version, second.body.data.project_version, 'version is the project version (what rollback takes)');
  t.is(newest.node_version, 2);
  t.is(newest.who, 'admin@example.com');
  t.is(newest.message, 'second');
  t.truthy(Date.parse(newest.created_at));
  t.is(oldest.message, 'first');

  const project = await c('GET', '/versions');
  t.is(project.body.data.commits[0].who, 'admin@example.com');

  const audit = await server.api('GET', `/nodes/${encodeURIComponent('hist/h.md')}/audit-logs?project_id=${pid}`, { token });
  assertDocumented(t, server.services, 'get', '/nodes/{ref}/audit-logs', audit);
  const log = audit.body.data.logs[0];
  t.is(log.operator_type, 'user');
  t.is(log.operator_id, log.actor_id);
  t.is(log.created_at, log.timestamp);
});

test('rollback {target_version} answers new_version and rolled_back_to; project diff has change_type', async (t) => {
  // A project of its own: rolling the whole project back must not undo the other tests' writes.
  const c = contentApi(server, token, await createProject(server, token, orgId, 'rollback'));
  const before = await c('POST', '/write', { path: 'rb/r.md', content: 'old', node_type: 'markdown' });
  await c('POST', '/write', { path: 'rb/r.md', content: 'new', node_type: 'markdown' });
  const target = before.body.data.project_version;
  const rb = await c('POST', '/rollback', { target_version: target, path: null, message: null });
  documented(t, 'post', '/rollback', rb);
  t.is(rb.body.data.rolled_back_to, target);
  t.is(rb.body.data.new_version, rb.body.data.project_version);
  t.true(rb.body.data.new_version > target);
  t.is((await c('GET', '/cat?path=rb/r.md')).body.data.content, 'old');

  const diff = await c('GET', `/diff?v1=${target}&v2=${rb.body.data.new_version}`);
  documented(t, 'get', '/diff', diff);
  t.true(diff.body.data.changes.length > 0);
  for (const ch of diff.body.data.changes) t.is(ch.change_type, ch.operation === 'deleted' ? 'removed' : ch.operation === 'added' ? 'added' : 'modified');

  const node = await c('POST', '/rollback', { path: 'rb/r.md', version: 2 });
  t.is(node.body.data.rolled_back_to, 2);
  t.is(node.body.data.new_version, node.body.data.version);
});

test('write takes type for node_type, or the type of the extension; anything else still needs it', async (t) => {
  const typed = await c('POST', '/write', { path: 'w/t.md', content: '# t', type: 'markdown' });
  t.is(typed.status, 201);
  documented(t, 'post', '/write', typed);
  t.is(typed.body.data.type, 'markdown');
  const byExt = await c('POST', '/write', { path: 'w/e.json', content: { e: 1 } });
  t.is(byExt.status, 201);
  t.is(byExt.body.data.type, 'json');
  const none = await c('POST', '/write', { path: 'w/blob.bin', content: 'AAEC' });
  t.is(none.status, 422);
  t.is(none.body.error.details[0].field, 'node_type');
  const both = await c('POST', '/write', { path: 'w/x.md', content: 'x', type: 'markdown', node_type: 'json' });
  t.is(both.status, 422);
  t.is(both.body.error.details[0].field, 'type');
  t.is((await c('GET', '/stat?path=w/x.md')).status, 404, 'a refused write writes nothing');
});

test('null stands for an absent optional field across the API; a required field sent as null is still 422', async (t) => {
  const write = await c('POST', '/write', { path: 'null/n.md', content: 'n', node_type: 'markdown', message: null, base_version: null });
  t.is(write.status, 201);
  const rm = await c('POST', '/rm', { path: 'null/n.md', permanent: null, message: null });
  t.is(rm.status, 200);
  t.false(rm.body.data.permanent, 'null takes the default');
  const required = await c('POST', '/write', { path: null, content: 'x', node_type: 'markdown' });
  t.is(required.status, 422);
  t.is(required.body.error.details[0].field, 'path');
  const folder = await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, name: 'nulls', parent_id: null, message: null } });
  t.is(folder.status, 201);
});
