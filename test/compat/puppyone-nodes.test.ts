import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The id surface, collaboration, folder sync and changelog as PuppyOne's id-addressed `fs` command
// line, its web front end's API client and its folder watcher use them (issue 32), through HTTP.

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

async function node(type: 'json' | 'markdown', name: string, content: unknown, parentId: string | null = null) {
  const res = await call('POST', `/nodes/${type}`, { project_id: pid, parent_id: parentId, name, content });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; version: number; path: string };
}

test('node records carry preview_md / preview_json; PUT takes them as the content', async (t) => {
  const md = await node('markdown', 'p.md', '# one');
  const json = await node('json', 'p.json', { a: 1 });
  const readMd = await call('GET', `/nodes/${md.id}?project_id=${pid}`);
  documented(t, 'get', '/nodes/{nodeId}', readMd);
  t.is(readMd.body.data.preview_md, '# one');
  const readJson = await call('GET', `/nodes/${json.id}`);
  t.deepEqual(readJson.body.data.preview_json, { a: 1 });

  const putMd = await call('PUT', `/nodes/${md.id}?project_id=${pid}`, { preview_md: '# two', name: null });
  documented(t, 'put', '/nodes/{nodeId}', putMd);
  t.is(putMd.body.data.content, '# two');
  t.is(putMd.body.data.version, 2);
  const putJson = await call('PUT', `/nodes/${json.id}`, { preview_json: { a: 2 } });
  t.deepEqual(putJson.body.data.preview_json, { a: 2 });

  const both = await call('PUT', `/nodes/${md.id}`, { content: 'x', preview_md: 'y' });
  t.is(both.status, 422);
  t.is(both.body.error.details[0].field, 'preview_md');
  t.is((await call('GET', `/nodes/${md.id}`)).body.data.content, '# two', 'a refused update changes nothing');
});

test('by-path accepts a leading slash', async (t) => {
  const folder = await call('POST', '/nodes/folder', { project_id: pid, name: 'slash' });
  const md = await node('markdown', 's.md', 's', folder.body.data.id);
  const res = await call('GET', `/nodes/by-path?project_id=${pid}&path=${encodeURIComponent('/slash/s.md')}`);
  documented(t, 'get', '/nodes/by-path', res);
  t.is(res.body.data.id, md.id);
  t.is((await call('GET', `/nodes/by-path?project_id=${pid}&path=slash/s.md`)).body.data.id, md.id);
});

test('POST /nodes/upload takes its fields as query parameters (content_type for mime_type)', async (t) => {
  const folder = await call('POST', '/nodes/folder', { project_id: pid, name: 'up' });
  const q = new URLSearchParams({ name: 'hello.txt', project_id: pid, content_type: 'text/plain', parent_id: folder.body.data.id });
  const res = await server.api('POST', `/nodes/upload?${q}`, { token });
  t.is(res.status, 201, JSON.stringify(res.body));
  documented(t, 'post', '/nodes/upload', res);
  const put = await fetch(res.body.data.upload_url, { method: 'PUT', body: 'hello\n' });
  t.is(put.status, 201);
  const file = await call('GET', `/nodes/${res.body.data.node_id}`);
  t.is(file.body.data.path, 'up/hello.txt');
  t.is(file.body.data.mime_type, 'text/plain');
  // The body still wins, and a missing project is still 422.
  const none = await server.api('POST', '/nodes/upload?name=x.txt', { token });
  t.is(none.status, 422);
  t.is(none.body.error.details[0].field, 'project_id');
});

test('versions carry operator fields and size_bytes; a version reads as content_json / content_text; rollback answers new_version; diff answers changes', async (t) => {
  const json = await node('json', 'v.json', { keep: 1, gone: true, n: 1 });
  await call('PUT', `/nodes/${json.id}`, { content: { keep: 1, n: 2, added: 'x' } });
  const md = await node('markdown', 'v.md', 'a\nb\n');
  await call('PUT', `/nodes/${md.id}`, { content: 'a\nc\n' });

  for (const prefix of ['/nodes/{nodeId}/versions', '/collab/versions/{nodeId}']) {
    const path = prefix.replace('{nodeId}', json.id);
    const versions = await call('GET', `${path}?project_id=${pid}&limit=50&offset=0`);
    documented(t, 'get', prefix, versions);
    const [v2] = versions.body.data.versions;
    t.is(v2.operator_type, 'user');
    t.is(v2.operator_id, v2.actor_id);
    t.is(v2.operation, 'update');
    t.is(v2.size_bytes, v2.size);
    t.regex(v2.content_hash, /^[0-9a-f]{40}$/);
  }

  const v1 = await call('GET', `/collab/versions/${json.id}/1?project_id=${pid}`);
  documented(t, 'get', '/collab/versions/{nodeId}/{version}', v1);
  t.deepEqual(v1.body.data.content_json, { keep: 1, gone: true, n: 1 });
  t.is((await call('GET', `/nodes/${md.id}/versions/1`)).body.data.content_text, 'a\nb\n');

  const diff = await call('GET', `/collab/diff/${json.id}/1/2?project_id=${pid}`);
  documented(t, 'get', '/collab/diff/{nodeId}/{v1}/{v2}', diff);
  const byPath = Object.fromEntries(diff.body.data.changes.map((c: { path: string }) => [c.path, c]));
  t.deepEqual(byPath['/gone'], { path: '/gone', change_type: 'removed', old_value: true, new_value: null });
  t.deepEqual(byPath['/n'], { path: '/n', change_type: 'modified', old_value: 1, new_value: 2 });
  t.deepEqual(byPath['/added'], { path: '/added', change_type: 'added', old_value: null, new_value: 'x' });
  const text = await call('GET', `/nodes/${md.id}/diff/1/2`);
  t.deepEqual(
    text.body.data.changes.map((c: { change_type: string; old_value: unknown; new_value: unknown }) => [c.change_type, c.old_value ?? c.new_value]),
    [['removed', 'b\n'], ['added', 'c\n']],
  );

  const rb = await call('POST', `/collab/rollback/${json.id}/1?project_id=${pid}`);
  documented(t, 'post', '/collab/rollback/{nodeId}/{version}', rb);
  t.is(rb.body.data.rolled_back_to, 1);
  t.is(rb.body.data.new_version, 3);
  t.deepEqual((await call('GET', `/nodes/${json.id}`)).body.data.content, { keep: 1, gone: true, n: 1 });
});

test('bulk-create items with parent_temp_id: null (and every other absent field as null)', async (t) => {
  const res = await call('POST', '/nodes/bulk-create', {
    project_id: pid,
    parent_id: null,
    nodes: [
      { temp_id: 'f', name: 'bulk-null', type: 'folder', parent_temp_id: null, content: null },
      { temp_id: 'm', name: 'in.md', type: 'markdown', parent_temp_id: 'f', content: '# in' },
    ],
  });
  t.is(res.status, 201, JSON.stringify(res.body));
  documented(t, 'post', '/nodes/bulk-create', res);
  t.deepEqual(res.body.data.nodes.map((n: { path: string }) => n.path), ['bulk-null', 'bulk-null/in.md']);
  // A misspelt field is still refused: the strict items are not loosened by accepting null.
  const misspelt = await call('POST', '/nodes/bulk-create', { project_id: pid, nodes: [{ name: 'x', type: 'folder', parent_tmp_id: null }] });
  t.is(misspelt.status, 422);
});

test('folder snapshots have an integer id and files_count; rollback-snapshot takes that id', async (t) => {
  const folder = (await call('POST', '/nodes/folder', { project_id: pid, name: 'snap' })).body.data;
  const a = await node('markdown', 'a.md', 'one', folder.id);
  await call('PUT', `/nodes/${a.id}`, { content: 'two' });
  const list = await call('GET', `/nodes/${folder.id}/snapshots`);
  documented(t, 'get', '/nodes/{nodeId}/snapshots', list);
  const [, first] = list.body.data.snapshots;
  t.true(Number.isInteger(first.id));
  t.is(first.id, first.project_version);
  t.is(first.files_count, 1);
  const rb = await call('POST', `/collab/rollback-snapshot/${folder.id}/${first.id}?project_id=${pid}`);
  documented(t, 'post', '/collab/rollback-snapshot/{nodeId}/{snapshotId}', rb);
  t.true(rb.body.data.changed);
  t.is((await call('GET', `/nodes/${a.id}`)).body.data.content, 'one');
  t.is((await call('POST', `/nodes/${folder.id}/rollback-snapshot/0`)).status, 422);
});

test('collab checkout {node_ids} answers working copies; commit {node_id, content, base_version, node_type} answers status and version', async (t) => {
  const md = await node('markdown', 'c.md', 'l1\nl2\nl3\n');
  const json = await node('json', 'c.json', { a: 1, b: 1 });
  const co = await call('POST', '/collab/checkout', { node_ids: [md.id, json.id] });
  documented(t, 'post', '/collab/checkout', co);
  t.deepEqual(co.body.data.map((w: { node_id: string; base_version: number }) => [w.node_id, w.base_version]), [[md.id, 1], [json.id, 1]]);
  t.is(co.body.data[0].content, 'l1\nl2\nl3\n');
  t.deepEqual(co.body.data[1].content_json, { a: 1, b: 1 });
  const ours = await call('POST', '/collab/checkout', { project_id: pid, node_ids: [md.id] });
  t.is(ours.body.data.nodes[0].base_version, 1, 'our shape with project_id is unchanged');

  const clean = await call('POST', '/collab/commit', { node_id: json.id, content: { a: 2, b: 1 }, base_version: 1, node_type: 'json' });
  documented(t, 'post', '/collab/commit', clean);
  t.deepEqual([clean.body.data.status, clean.body.data.version], ['clean', 2]);
  // Written against version 1 again: merged key by key with the change above.
  const merged = await call('POST', '/collab/commit', { node_id: json.id, content: { a: 1, b: 3 }, base_version: 1, node_type: 'json' });
  t.deepEqual([merged.body.data.status, merged.body.data.version, merged.body.data.strategy], ['merged', 3, 'json_key']);
  t.deepEqual(merged.body.data.final_content, { a: 2, b: 3 });

  const wrongType = await call('POST', '/collab/commit', { node_id: md.id, content: 'x', base_version: 1, node_type: 'json' });
  t.is(wrongType.status, 422);
  t.is(wrongType.body.error.details[0].field, 'node_type');
  t.is((await call('GET', `/nodes/${md.id}`)).body.data.version, 1, 'a refused commit writes nothing');
});

test("another project's nodes stay 404 through PuppyOne's collab forms", async (t) => {
  const stranger = await server.createUser('stranger@example.com');
  const md = await node('markdown', 'private.md', 'secret');
  const co = await call('POST', '/collab/checkout', { node_ids: [md.id] }, stranger.token);
  t.is(co.status, 404);
  const commit = await call('POST', '/collab/commit', { node_id: md.id, content: 'x', base_version: 1 }, stranger.token);
  t.is(commit.status, 404);
  // A node of another project named after one of this project: not found, not forbidden.
  const other = await createProject(server, token, orgId, 'other');
  const there = await call('POST', '/nodes/markdown', { project_id: other, name: 'there.md', content: 't' });
  const mixed = await call('POST', '/collab/checkout', { node_ids: [md.id, there.body.data.id] });
  t.is(mixed.status, 404);
});

test('folder sync: push-file {external_resource_id, content_md | content_json} answers action; ack-pull {items}; pull-files for the owner with a user token', async (t) => {
  const boot = await call('POST', '/sync/bootstrap', { project_id: pid, provider: 'folder', config: { path: 'synced' } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  const { sync, key } = boot.body.data as { sync: { id: string }; key: string };
  const push = (body: unknown) => call('POST', `/sync/syncs/${sync.id}/push-file`, body, key);

  const created = await push({ external_resource_id: 'notes/a.md', content_md: '# a', content_json: null, content_hash: 'x' });
  documented(t, 'post', '/sync/syncs/{syncId}/push-file', created);
  t.is(created.status, 200, JSON.stringify(created.body));
  t.is(created.body.data.action, 'created');
  const same = await push({ external_resource_id: 'notes/a.md', content_md: '# a', content_hash: 'x' });
  t.is(same.status, 200, JSON.stringify(same.body));
  t.is(same.body.data.action, 'skipped');
  const updated = await push({ external_resource_id: 'notes/a.md', content_md: '# b' });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.is(updated.body.data.action, 'updated');
  const json = await push({ external_resource_id: 'c.json', content_json: { c: 1 }, content_md: null });
  t.is(json.status, 200, JSON.stringify(json.body));
  t.is(json.body.data.action, 'created');
  t.is((await server.api('GET', `/content/${pid}/cat?path=synced/c.json`, { token })).body.data.content.c, 1);
  t.is((await server.api('GET', `/content/${pid}/cat?path=synced/notes/a.md`, { token })).body.data.content, '# b');
  t.is((await push({ external_resource_id: 'd.md' })).status, 422, 'no content is refused');
  t.is((await call('POST', `/sync/syncs/${sync.id}/push-file`, { external_resource_id: 'e.md', content_md: 'e' })).status, 403, 'pushing stays the key\'s');

  // The owner pulls with their own token; another member of the project may not.
  const pull = await call('GET', `/sync/syncs/${sync.id}/pull-files`);
  t.is(pull.status, 200, JSON.stringify(pull.body));
  documented(t, 'get', '/sync/syncs/{syncId}/pull-files', pull);
  const files = Object.fromEntries(pull.body.data.files.map((f: { external_resource_id: string }) => [f.external_resource_id, f]));
  t.is(files['notes/a.md'].content_md, '# b');
  t.is(files['notes/a.md'].current_version, 2);
  t.deepEqual(files['c.json'].content_json, { c: 1 });
  const member = await server.createUser('member@example.com');
  await call('POST', `/projects/${pid}/members`, { email: 'member@example.com', role: 'editor' });
  const theirs = await call('GET', `/sync/syncs/${sync.id}/pull-files`, undefined, member.token);
  t.true([403, 404].includes(theirs.status), `another user: ${theirs.status}`);

  const ack = await call('POST', `/sync/syncs/${sync.id}/ack-pull`, { items: [
    { node_id: files['notes/a.md'].node_id, version: 2, remote_hash: 'h' },
    { path: 'synced/c.json', version: 1, remote_hash: 'h' },
  ] }, key);
  t.is(ack.status, 200, JSON.stringify(ack.body));
  documented(t, 'post', '/sync/syncs/{syncId}/ack-pull', ack);
  t.is(ack.body.data.sync.acked_cursor, json.body.data.project_version, 'the cursor is the newest commit the items name');
  const bad = await call('POST', `/sync/syncs/${sync.id}/ack-pull`, { items: [{ node_id: files['c.json'].node_id, version: 9 }] }, key);
  t.is(bad.status, 422);
  t.is(bad.body.error.details[0].field, 'items.0');

  // Our status never shows the key again.
  const status = await call('GET', `/sync/status?project_id=${pid}`);
  t.false(JSON.stringify(status.body).includes(key));
});

test('changelog: a node rollback reads as an update at its new version, with operation rollback', async (t) => {
  const md = await node('markdown', 'log.md', 'one');
  await call('PUT', `/nodes/${md.id}`, { content: 'two' });
  const rb = await call('POST', `/nodes/${md.id}/rollback/1`);
  const log = await call('GET', `/sync/changelog?project_id=${pid}&cursor=${rb.body.data.project_version - 1}`);
  documented(t, 'get', '/sync/changelog', log);
  const entry = log.body.data.entries.find((e: { node_id: string }) => e.node_id === md.id);
  t.is(entry.action, 'update');
  t.is(entry.operation, 'rollback');
  t.is(entry.version, 3);
});
