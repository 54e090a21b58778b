import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, defaultProject } from '../helpers/project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.ts';

/** Real answers of the declared groups, each validated against its documented `response` schema. */

let server: TestServer;
let token: string;
let pid: string;
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
});
test.after.always(() => server.stop());

const b64 = (s: string) => Buffer.from(s).toString('base64');
const check = (t: import('ava').ExecutionContext, method: string, path: string, res: Awaited<ReturnType<TestServer['api']>>) =>
  assertDocumented(t, server.services, method, path, res);

test('auth and profile answers match their documented schemas', async (t) => {
  check(t, 'get', '/auth/config', await server.api('GET', '/auth/config'));
  const login = await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  check(t, 'post', '/auth/login', login);
  const refreshed = await server.api('POST', '/auth/refresh', { body: { refresh_token: login.body.data.refresh_token } });
  check(t, 'post', '/auth/refresh', refreshed);
  check(t, 'post', '/auth/logout', await server.api('POST', '/auth/logout', { body: { refresh_token: refreshed.body.data.refresh_token } }));
  check(t, 'get', '/auth/me', await server.api('GET', '/auth/me', { token }));
  const { key } = await createKey(server, token, pid, { scope_path: 'docs', mode: 'read' });
  const asKey = await server.api('GET', '/auth/me', { token: key });
  check(t, 'get', '/auth/me', asKey);
  t.like(asKey.body.data, { kind: 'key', connection: { scope_path: 'docs', mode: 'read' } });

  const fresh = await server.createUser(`samples-${process.pid}@example.com`);
  const init = await server.api('POST', '/auth/initialize', { token: fresh.token });
  check(t, 'post', '/auth/initialize', init);
  t.true(init.body.data.created);
  check(t, 'post', '/auth/initialize', await server.api('POST', '/auth/initialize', { token: fresh.token }));
  check(t, 'get', '/profile/me', await server.api('GET', '/profile/me', { token: fresh.token }));
  check(t, 'get', '/profile/onboarding/status', await server.api('GET', '/profile/onboarding/status', { token: fresh.token }));
  check(t, 'post', '/profile/onboarding/complete', await server.api('POST', '/profile/onboarding/complete', { token: fresh.token }));
  check(t, 'post', '/profile/onboarding/reset', await server.api('POST', '/profile/onboarding/reset', { token: fresh.token }));
});

test('sign-up answers match their documented schema', async (t) => {
  const open = await startTestServer({}, { CNS_SIGNUP_OPEN: 'true' });
  try {
    const res = await open.api('POST', '/auth/signup', { body: { email: 'new@example.com', password: 'a-long-password' } });
    assertDocumented(t, open.services, 'post', '/auth/signup', res);
  } finally {
    await open.stop();
  }
});

test('organization, member and invitation answers match their documented schemas', async (t) => {
  const owner = await server.createUser(`org-owner-${process.pid}@example.com`);
  const guest = await server.createUser(`org-guest-${process.pid}@example.com`);
  const created = await server.api('POST', '/organizations', { token: owner.token, body: { name: 'Samples', description: 'd' } });
  check(t, 'post', '/organizations', created);
  const org = created.body.data.id;
  check(t, 'get', '/organizations', await server.api('GET', '/organizations', { token: owner.token }));
  check(t, 'get', '/organizations/{org_id}', await server.api('GET', `/organizations/${org}`, { token: owner.token }));
  check(t, 'put', '/organizations/{org_id}', await server.api('PUT', `/organizations/${org}`, { token: owner.token, body: { name: 'Renamed' } }));
  const invite = await server.api('POST', `/organizations/${org}/invite`, { token: owner.token, body: { email: guest.email, role: 'member' } });
  check(t, 'post', '/organizations/{org_id}/invite', invite);
  check(t, 'get', '/organizations/{org_id}/invitations', await server.api('GET', `/organizations/${org}/invitations`, { token: owner.token }));
  const accept = await server.api('POST', `/organizations/invitations/${invite.body.data.token}/accept`, { token: guest.token });
  check(t, 'post', '/organizations/invitations/{token}/accept', accept);
  check(t, 'get', '/organizations/{org_id}/members', await server.api('GET', `/organizations/${org}/members`, { token: owner.token }));
  const role = await server.api('PUT', `/organizations/${org}/members/${guest.id}/role`, { token: owner.token, body: { role: 'viewer' } });
  check(t, 'put', '/organizations/{org_id}/members/{user_id}/role', role);
  check(t, 'post', '/organizations/{org_id}/leave', await server.api('POST', `/organizations/${org}/leave`, { token: guest.token }));
  const again = await server.api('POST', `/organizations/${org}/invite`, { token: owner.token, body: { email: guest.email } });
  await server.api('POST', `/organizations/invitations/${again.body.data.token}/accept`, { token: guest.token });
  check(t, 'delete', '/organizations/{org_id}/members/{user_id}', await server.api('DELETE', `/organizations/${org}/members/${guest.id}`, { token: owner.token }));
  check(t, 'delete', '/organizations/{org_id}', await server.api('DELETE', `/organizations/${org}`, { token: owner.token }));
});

test('sync answers match their documented schemas', async (t) => {
  check(t, 'get', '/sync/connectors', await server.api('GET', '/sync/connectors', { token }));
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: pid, provider: 'folder', config: { path: 'synced' } } });
  check(t, 'post', '/sync/bootstrap', boot);
  const { sync, key } = boot.body.data;
  check(t, 'get', '/sync/status', await server.api('GET', `/sync/status?project_id=${pid}`, { token }));
  check(t, 'get', '/sync/syncs', await server.api('GET', `/sync/syncs?project_id=${pid}`, { token }));
  const pull0 = await server.api('GET', `/sync/syncs/${sync.id}/pull-files?cursor=0`, { token: key });
  check(t, 'get', '/sync/syncs/{syncId}/pull-files', pull0);
  const runId = pull0.body.data.run_id;
  const push = await server.api('POST', `/sync/syncs/${sync.id}/push-file`, { token: key, body: { run_id: runId, action: 'write', path: 'synced/a.md', content: b64('# a\n') } });
  check(t, 'post', '/sync/syncs/{syncId}/push-file', push);
  const batch = await server.api('POST', `/sync/syncs/${sync.id}/push-file`, {
    token: key,
    body: { run_id: runId, files: [{ action: 'write', path: 'synced/b.json', content: b64('{"b":1}') }, { action: 'move', from: 'synced/a.md', path: 'synced/c.md' }] },
  });
  check(t, 'post', '/sync/syncs/{syncId}/push-file', batch);
  const pulled = await server.api('GET', `/sync/syncs/${sync.id}/pull-files?cursor=0`, { token: key });
  check(t, 'get', '/sync/syncs/{syncId}/pull-files', pulled);
  t.true(pulled.body.data.files.length >= 2);
  const ack = await server.api('POST', `/sync/syncs/${sync.id}/ack-pull`, { token: key, body: { cursor: pulled.body.data.cursor, run_id: pulled.body.data.run_id } });
  check(t, 'post', '/sync/syncs/{syncId}/ack-pull', ack);
  const runs = await server.api('GET', `/sync/syncs/${sync.id}/runs`, { token });
  check(t, 'get', '/sync/syncs/{syncId}/runs', runs);
  check(t, 'get', '/sync/runs/{runId}', await server.api('GET', `/sync/runs/${runs.body.data.runs[0].id}`, { token }));
  check(t, 'get', '/sync/changelog', await server.api('GET', `/sync/changelog?project_id=${pid}`, { token: key }));
  check(t, 'post', '/sync/syncs/{syncId}/pause', await server.api('POST', `/sync/syncs/${sync.id}/pause`, { token }));
  check(t, 'post', '/sync/syncs/{syncId}/resume', await server.api('POST', `/sync/syncs/${sync.id}/resume`, { token }));
  const trigger = await server.api('PATCH', `/sync/syncs/${sync.id}/trigger`, { token, body: { trigger_mode: sync.trigger_mode } });
  check(t, 'patch', '/sync/syncs/{syncId}/trigger', trigger);
  check(t, 'delete', '/sync/syncs/{syncId}', await server.api('DELETE', `/sync/syncs/${sync.id}`, { token }));
});

test("a sync's key pushing outside its scope is refused by the content-access policy, with its one message", async (t) => {
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: pid, provider: 'folder', config: { path: 'inside' } } });
  const { sync, key } = boot.body.data;
  const res = await server.api('POST', `/sync/syncs/${sync.id}/push-file`, {
    token: key,
    body: { files: [{ action: 'write', path: 'inside/ok.md', content: b64('ok') }, { action: 'write', path: 'outside/no.md', content: b64('no') }] },
  });
  t.is(res.status, 403);
  t.is(res.body.message, 'This access key is limited to "inside".');
  t.deepEqual(res.body.error.details, { scope: 'inside' });
  const after = await server.api('GET', `/sync/changelog?project_id=${pid}`, { token });
  t.false(after.body.data.entries.some((e: { path: string }) => e.path.startsWith('inside/')), 'nothing of the refused batch was written');
  const single = await server.api('POST', `/sync/syncs/${sync.id}/push-file`, { token: key, body: { action: 'write', path: 'inside/x.md' } });
  t.is(single.status, 422);
  t.deepEqual(single.body.error.details.map((d: { field: string }) => d.field), ['content'], 'a bad single change names its field, not the whole body');
});

test('collab answers (and their /nodes twins) match their documented schemas', async (t) => {
  const call = (method: string, path: string, body?: unknown) => server.api(method, path, { token, body });
  const folder = (await call('POST', '/nodes/folder', { project_id: pid, name: 'collab-docs' })).body.data;
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, parent_id: folder.id, name: 'a.md', content: 'one' })).body.data;
  const json = (await call('POST', '/nodes/json', { project_id: pid, parent_id: folder.id, name: 'b.json', content: { n: 1 } })).body.data;
  const checkout = await call('POST', '/collab/checkout', { project_id: pid, node_ids: [md.id, json.id] });
  check(t, 'post', '/collab/checkout', checkout);
  const commit = await call('POST', '/collab/commit', { project_id: pid, mutations: [{ node_id: md.id, content: 'two', base_version: 1 }, { node_id: json.id, content: { n: 2 } }] });
  check(t, 'post', '/collab/commit', commit);
  const merged = await call('POST', '/collab/commit', { project_id: pid, mutations: [{ node_id: md.id, content: 'one\nthree', base_version: 1 }] });
  t.true([200, 409].includes(merged.status));
  if (merged.status === 200) check(t, 'post', '/collab/commit', merged);
  for (const [prefix, versions, version, diff] of [
    ['/collab', `/collab/versions/${md.id}`, `/collab/versions/${md.id}/1`, `/collab/diff/${md.id}/1/2`],
    ['/nodes', `/nodes/${md.id}/versions`, `/nodes/${md.id}/versions/1`, `/nodes/${md.id}/diff/1/2`],
  ] as const) {
    const twin = prefix === '/collab';
    check(t, 'get', twin ? '/collab/versions/{nodeId}' : '/nodes/{nodeId}/versions', await call('GET', versions));
    check(t, 'get', twin ? '/collab/versions/{nodeId}/{version}' : '/nodes/{nodeId}/versions/{version}', await call('GET', version));
    check(t, 'get', twin ? '/collab/diff/{nodeId}/{v1}/{v2}' : '/nodes/{nodeId}/diff/{v1}/{v2}', await call('GET', diff));
  }
  check(t, 'get', '/collab/diff/{nodeId}/{v1}/{v2}', await call('GET', `/collab/diff/${json.id}/1/2`));
  check(t, 'post', '/collab/rollback/{nodeId}/{version}', await call('POST', `/collab/rollback/${md.id}/1`, { message: 'back' }));
  check(t, 'post', '/nodes/{nodeId}/rollback/{version}', await call('POST', `/nodes/${json.id}/rollback/1`));
  const snaps = await call('GET', `/collab/snapshots/${folder.id}`);
  check(t, 'get', '/collab/snapshots/{nodeId}', snaps);
  check(t, 'get', '/nodes/{nodeId}/snapshots', await call('GET', `/nodes/${folder.id}/snapshots`));
  const oldest = snaps.body.data.snapshots.at(-1).snapshot_id;
  check(t, 'post', '/collab/rollback-snapshot/{nodeId}/{snapshotId}', await call('POST', `/collab/rollback-snapshot/${folder.id}/${oldest}`));
  check(t, 'post', '/nodes/{nodeId}/rollback-snapshot/{snapshotId}', await call('POST', `/nodes/${folder.id}/rollback-snapshot/${oldest}`));
});

test('the event stream is declared with its query and described as a stream', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  const events = doc.paths['/events'].get;
  t.falsy(events['x-undeclared']);
  t.is(events['x-permission'], 'content:read');
  t.deepEqual(events.parameters.map((p: { name: string }) => p.name).sort(), ['apikey', 'last_event_id', 'project_id']);
  t.true(events.parameters.find((p: { name: string }) => p.name === 'project_id').required);
  t.regex(events.description, /text\/event-stream/);
  t.regex(events.description, /`revoked`/);
  t.truthy(events.responses['200'].content['text/event-stream'], 'documented as a stream, not a JSON envelope');
  t.falsy(events.responses['200'].content['application/json']);
  for (const p of ['/auth/me', '/profile/me', '/organizations/{org_id}/members', '/sync/syncs/{syncId}/push-file', '/collab/commit']) {
    const ops = Object.values(doc.paths[p] ?? {}) as { 'x-undeclared'?: boolean }[];
    t.true(ops.length > 0 && ops.every((o) => !o['x-undeclared']), `${p} is declared`);
  }
});

test('path-surface answers match their documented schemas', async (t) => {
  const c = (path: string) => `/content/${pid}${path}`;
  const write = await server.api('POST', c('/write'), { token, body: { path: 'samples/a.md', node_type: 'markdown', content: 'one' } });
  check(t, 'post', '/content/{projectId}/write', write);
  t.is(write.status, 201);
  const again = await server.api('POST', c('/write'), { token, body: { path: 'samples/a.md', node_type: 'markdown', content: 'two' } });
  check(t, 'post', '/content/{projectId}/write', again);
  t.is(again.status, 200);
  await server.api('POST', c('/write'), { token, body: { path: 'samples/b.json', node_type: 'json', content: { n: 1 } } });
  check(t, 'get', '/content/{projectId}/ls', await server.api('GET', c('/ls?path=samples'), { token }));
  check(t, 'get', '/content/{projectId}/cat', await server.api('GET', c('/cat?path=samples/a.md'), { token }));
  check(t, 'get', '/content/{projectId}/cat', await server.api('GET', c('/cat?path=samples'), { token }));
  check(t, 'get', '/content/{projectId}/stat', await server.api('GET', c('/stat?path=samples/b.json'), { token }));
  check(t, 'get', '/content/{projectId}/stat', await server.api('GET', c('/stat'), { token }));
  check(t, 'get', '/content/{projectId}/tree', await server.api('GET', c('/tree?path=samples'), { token }));
  check(t, 'get', '/content/{projectId}/paths', await server.api('GET', c('/paths?path=samples'), { token }));
  check(t, 'get', '/content/{projectId}/versions', await server.api('GET', c('/versions?path=samples/a.md'), { token }));
  check(t, 'get', '/content/{projectId}/versions', await server.api('GET', c('/versions?path=samples/a.md&version=1'), { token }));
  const commits = await server.api('GET', c('/versions'), { token });
  check(t, 'get', '/content/{projectId}/versions', commits);
  check(t, 'get', '/content/{projectId}/diff', await server.api('GET', c('/diff?path=samples/a.md&v1=1&v2=2'), { token }));
  const pv = commits.body.data.current_version;
  check(t, 'get', '/content/{projectId}/diff', await server.api('GET', c(`/diff?v1=${pv - 2}&v2=${pv}`), { token }));
  check(t, 'post', '/content/{projectId}/rollback', await server.api('POST', c('/rollback'), { token, body: { path: 'samples/a.md', version: 1 } }));
  check(t, 'post', '/content/{projectId}/rollback', await server.api('POST', c('/rollback'), { token, body: { path: 'samples', target_version: pv } }));
  check(t, 'post', '/content/{projectId}/rollback', await server.api('POST', c('/rollback'), { token, body: { path: 'samples/a.md', target_version: pv } }));
  check(t, 'post', '/content/{projectId}/mkdir', await server.api('POST', c('/mkdir'), { token, body: { path: 'samples/dir' } }));
  check(t, 'post', '/content/{projectId}/mv', await server.api('POST', c('/mv'), { token, body: { old_path: 'samples/dir', new_path: 'samples/dir2' } }));
  check(t, 'post', '/content/{projectId}/rm', await server.api('POST', c('/rm'), { token, body: { path: 'samples/dir2' } }));
  const trash = await server.api('GET', c('/trash'), { token });
  check(t, 'get', '/content/{projectId}/trash', trash);
  const item = trash.body.data.items.find((i: { original_path: string }) => i.original_path === 'samples/dir2');
  check(t, 'post', '/content/{projectId}/restore', await server.api('POST', c('/restore'), { token, body: { trash_path: item.trash_path, original_path: 'samples/dir3' } }));
  check(t, 'post', '/content/{projectId}/bulk-write', await server.api('POST', c('/bulk-write'), { token, body: { files: [{ path: 'samples/c.md', node_type: 'markdown', content: 'c' }] } }));
  const doc = (await server.api('GET', '/openapi.json')).body;
  t.truthy(doc.paths['/content/{projectId}/raw'].get.responses['200'].content['application/octet-stream'], 'raw bytes are documented as bytes');
});

test('id-surface answers match their documented schemas', async (t) => {
  const folder = await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, name: 'id-samples' } });
  check(t, 'post', '/nodes/folder', folder);
  const md = await server.api('POST', '/nodes/markdown', { token, body: { project_id: pid, parent_id: folder.body.data.id, name: 'a.md', content: 'x' } });
  check(t, 'post', '/nodes/markdown', md);
  const json = await server.api('POST', '/nodes/json', { token, body: { project_id: pid, parent_id: folder.body.data.id, name: 'b.json', content: { a: 1 } } });
  check(t, 'post', '/nodes/json', json);
  const id = md.body.data.id;
  check(t, 'get', '/nodes/{nodeId}', await server.api('GET', `/nodes/${id}`, { token }));
  check(t, 'get', '/nodes', await server.api('GET', `/nodes?project_id=${pid}&parent_id=${folder.body.data.id}`, { token }));
  check(t, 'put', '/nodes/{nodeId}', await server.api('PUT', `/nodes/${id}`, { token, body: { content: 'y', name: 'a2.md' } }));
  check(t, 'get', '/nodes/by-path', await server.api('GET', `/nodes/by-path?project_id=${pid}&path=id-samples/a2.md`, { token }));
  check(t, 'get', '/nodes/by-id-path', await server.api('GET', `/nodes/by-id-path?project_id=${pid}&id_path=${md.body.data.id_path}`, { token }));
  check(t, 'get', '/nodes/batch', await server.api('GET', `/nodes/batch?ids=${id},${json.body.data.id},nope`, { token }));
  const bulk = await server.api('POST', '/nodes/bulk-create', { token, body: { project_id: pid, parent_id: folder.body.data.id, nodes: [{ name: 'sub', type: 'folder' }, { name: 'c.md', type: 'markdown', content: 'c' }] } });
  check(t, 'post', '/nodes/bulk-create', bulk);
  const sub = bulk.body.data.nodes[0].id;
  check(t, 'post', '/nodes/{nodeId}/move', await server.api('POST', `/nodes/${json.body.data.id}/move`, { token, body: { new_parent_id: sub } }));
  const upload = await server.api('POST', '/nodes/upload', { token, body: { project_id: pid, parent_id: sub, name: 'f.bin', size: 3 } });
  check(t, 'post', '/nodes/upload', upload);
  const put = await fetch(upload.body.data.upload_url, { method: 'PUT', body: Buffer.from('abc') });
  const putBody = (await put.json()) as { success: boolean; code: unknown; data: { id: string } };
  assertDocumented(t, server.services, 'put', '/nodes/upload/{token}', { status: put.status, body: putBody });
  check(t, 'get', '/nodes/{nodeId}/download', await server.api('GET', `/nodes/${putBody.data.id}/download`, { token }));
  check(t, 'delete', '/nodes/{nodeId}', await server.api('DELETE', `/nodes/${id}`, { token }));
  check(t, 'get', '/nodes/{ref}/audit-logs', await server.api('GET', `/nodes/${json.body.data.id}/audit-logs`, { token }));
});

test('project answers match their documented schemas', async (t) => {
  check(t, 'get', '/projects', await server.api('GET', '/projects', { token }));
  check(t, 'get', '/projects/{project_id}', await server.api('GET', `/projects/${pid}`, { token }));
  check(t, 'get', '/projects/{project_id}/members', await server.api('GET', `/projects/${pid}/members`, { token }));
  check(t, 'get', '/projects/{projectId}/audit-logs', await server.api('GET', `/projects/${pid}/audit-logs`, { token }));
  check(t, 'get', '/projects/{projectId}/dashboard', await server.api('GET', `/projects/${pid}/dashboard`, { token }));
  const doc = (await server.api('GET', '/openapi.json')).body;
  const undeclared = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops as object).filter(([, o]) => o['x-undeclared']).map(([m]) => `${m} ${p}`));
  t.deepEqual(undeclared, [], 'every route is declared');
});

test('node records carry id_path, which by-id-path takes; listings and trees carry it too', async (t) => {
  const a = (await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, name: 'idp' } })).body.data;
  const b = (await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, parent_id: a.id, name: 'b' } })).body.data;
  const c = (await server.api('POST', '/nodes/markdown', { token, body: { project_id: pid, parent_id: b.id, name: 'c.md', content: 'c' } })).body.data;
  t.is(a.id_path, a.id);
  t.is(c.id_path, `${a.id}/${b.id}/${c.id}`);
  const viaIdPath = await server.api('GET', `/nodes/by-id-path?project_id=${pid}&id_path=${c.id_path}`, { token });
  t.is(viaIdPath.body.data.id, c.id);
  const list = await server.api('GET', `/nodes?project_id=${pid}&parent_id=${b.id}`, { token });
  t.deepEqual(list.body.data.nodes.map((n: { id_path: string }) => n.id_path), [c.id_path]);
  const ls = await server.api('GET', `/content/${pid}/ls?path=idp/b`, { token });
  t.deepEqual(ls.body.data.entries.map((n: { id_path: string }) => n.id_path), [c.id_path]);
  const tree = await server.api('GET', `/content/${pid}/tree?path=idp`, { token });
  t.is(tree.body.data.id_path, a.id);
  t.is(tree.body.data.children[0].children[0].id_path, c.id_path);
  const stat = await server.api('GET', `/content/${pid}/stat?path=idp/b/c.md`, { token });
  t.is(stat.body.data.id_path, c.id_path);
});

test('POST /nodes/upload works without a declared size; the limit still applies while streaming', async (t) => {
  const limit = 200_000;
  const small = await startTestServer({ maxUploadBytes: limit });
  t.teardown(() => small.stop());
  const token = (await small.login()).token;
  const pid = (await defaultProject(small, token)).projectId;
  const server = small;
  const check = (tt: typeof t, method: string, path: string, res: Awaited<ReturnType<TestServer['api']>>) => assertDocumented(tt, small.services, method, path, res);
  const up = await server.api('POST', '/nodes/upload', { token, body: { project_id: pid, name: 'nosize.bin' } });
  check(t, 'post', '/nodes/upload', up);
  t.is(up.body.data.size, null);
  const put = await fetch(up.body.data.upload_url, { method: 'PUT', body: Buffer.from('hello') });
  t.is(put.status, 201);
  const node = ((await put.json()) as { data: { id: string; size: number } }).data;
  t.is(node.size, 5);
  const bytes = await fetch((await server.api('GET', `/nodes/${node.id}/download`, { token })).body.data.download_url);
  t.is(await bytes.text(), 'hello');
  // A chunked body (no Content-Length) over the limit is refused while streaming, and nothing is written.
  const big = await server.api('POST', '/nodes/upload', { token, body: { project_id: pid, name: 'toobig.bin' } });
  const chunk = Buffer.alloc(64 * 1024, 1);
  let sent = 0;
  const stream = new ReadableStream({
    pull(c) {
      if (sent > limit) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  const res = await fetch(big.body.data.upload_url, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit);
  t.is(res.status, 413);
  t.is((await server.api('GET', `/nodes/by-path?project_id=${pid}&path=toobig.bin`, { token })).status, 404);
  const declaredTooBig = await fetch(big.body.data.upload_url, { method: 'PUT', body: Buffer.alloc(limit + 1) });
  t.is(declaredTooBig.status, 413);
});

test('POST /nodes/{id}/move accepts parent_id as another name for new_parent_id; both and different is 422', async (t) => {
  const dest = (await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, name: 'move-dest' } })).body.data;
  const other = (await server.api('POST', '/nodes/folder', { token, body: { project_id: pid, name: 'move-other' } })).body.data;
  const md = (await server.api('POST', '/nodes/markdown', { token, body: { project_id: pid, name: 'mover.md', content: 'm' } })).body.data;
  const both = await server.api('POST', `/nodes/${md.id}/move`, { token, body: { parent_id: dest.id, new_parent_id: other.id } });
  t.is(both.status, 422);
  t.is((await server.api('GET', `/nodes/${md.id}`, { token })).body.data.parent_id, null, 'nothing moved');
  const moved = await server.api('POST', `/nodes/${md.id}/move`, { token, body: { parent_id: dest.id } });
  check(t, 'post', '/nodes/{nodeId}/move', moved);
  t.is(moved.body.data.parent_id, dest.id);
  t.is(moved.body.data.id_path, `${dest.id}/${md.id}`);
});
