import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { contentApi, createKey, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { HOLD, heldWorkspace as heldIn } from './heldCommand.ts';
import { leavesNoHostMounts } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let c: ContentCall;
let workId: string;

test.before(async () => {
  server = await startTestServer({}, { CNS_SANDBOX: 'bwrap' });
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'work/notes.md', node_type: 'markdown', content: 'line one\nline two\n' });
  await c('POST', '/write', { path: 'work/data.json', node_type: 'json', content: { a: 1, list: [1, 2] } });
  await c('POST', '/write', { path: 'work/sub/deep.md', node_type: 'markdown', content: 'deep' });
  await c('POST', '/write', { path: 'outside/secret.md', node_type: 'markdown', content: 'not for the sandbox' });
  workId = server.services.content.findByPath(projectId, 'work')!.id;
});

test.after.always(async () => server?.stop());

async function endpoint(body: Record<string, unknown> = {}) {
  const r = await server.api('POST', '/sandbox-endpoints/', { token, body: { name: 'sbx', project_id: projectId, node_id: workId, ...body } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.data.sandbox_endpoint.id as string, key: r.body.data.key as string, data: r.body.data.sandbox_endpoint };
}
const exec = (id: string, body: Record<string, unknown>, credential = token) => server.api('POST', `/sandbox-endpoints/${id}/exec`, { token: credential, body });
const version = () => server.services.content.projectVersion(projectId);

test.serial('sandbox endpoints are created, listed, read by id and by node, updated, re-keyed and deleted; each is a sandbox connection', async (t) => {
  const e = await endpoint({ name: 'crud', mode: 'read', limits: { timeout_s: 10 } });
  t.like(e.data, { name: 'crud', project_id: projectId, node_id: workId, path: 'work', mode: 'read', status: 'active', runtime: 'bwrap' });
  t.deepEqual(e.data.limits, { timeout_s: 10, memory_mb: 512, max_processes: 256, disk_mb: 1024 });
  t.regex(e.key, /^\S{20,}$/);
  const list = await server.api('GET', `/sandbox-endpoints/?project_id=${projectId}`, { token });
  t.is(list.status, 200);
  t.true(list.body.data.sandbox_endpoints.some((x: { id: string }) => x.id === e.id));
  t.is((await server.api('GET', `/sandbox-endpoints/${e.id}`, { token })).body.data.name, 'crud');
  const byNode = await server.api('GET', `/sandbox-endpoints/by-node/${workId}`, { token });
  t.true(byNode.body.data.sandbox_endpoints.some((x: { id: string }) => x.id === e.id));
  const conns = await server.api('GET', `/connections/?project_id=${projectId}&kind=sandbox`, { token });
  const conn = conns.body.data.connections.find((x: { id: string }) => x.id === e.id);
  t.like(conn, { kind: 'sandbox', scope_path: 'work', mode: 'read' });
  t.false(JSON.stringify(conns.body).includes(e.key), 'the key is never shown again');

  const put = await server.api('PUT', `/sandbox-endpoints/${e.id}`, { token, body: { name: 'renamed', mode: 'read_write', limits: { memory_mb: 128 } } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.like(put.body.data, { name: 'renamed', mode: 'read_write' });
  t.deepEqual(put.body.data.limits, { timeout_s: 30, memory_mb: 128, max_processes: 256, disk_mb: 1024 });

  t.is((await exec(e.id, { command: 'true' }, e.key)).status, 200);
  const regen = await server.api('POST', `/sandbox-endpoints/${e.id}/regenerate-key`, { token });
  t.is(regen.status, 200);
  t.not(regen.body.data.key, e.key);
  t.is((await exec(e.id, { command: 'true' }, e.key)).status, 401, 'the old key stopped working');
  t.is((await exec(e.id, { command: 'true' }, regen.body.data.key)).status, 200);
  t.is((await server.api('DELETE', `/sandbox-endpoints/${e.id}`, { token })).status, 200);
  t.is((await server.api('GET', `/sandbox-endpoints/${e.id}`, { token })).status, 404);
  t.is((await exec(e.id, { command: 'true' }, regen.body.data.key)).status, 401);
});

test.serial('exec runs the command over the folder: stdout, stderr, exit code, stdin, and nothing outside the folder', async (t) => {
  const e = await endpoint();
  const before = version();
  const r = await exec(e.id, { command: 'ls -R . | sort; cat notes.md; echo oops >&2; exit 3' }, e.key);
  t.is(r.status, 200, JSON.stringify(r.body));
  const d = r.body.data;
  t.regex(d.stdout, /notes\.md/);
  t.regex(d.stdout, /deep\.md/);
  t.regex(d.stdout, /line two/);
  t.notRegex(d.stdout, /secret/);
  t.is(d.stderr, 'oops\n');
  t.is(d.exit_code, 3);
  t.false(d.timed_out);
  t.deepEqual(d.truncated, { stdout: false, stderr: false });
  t.deepEqual(d.changes, []);
  t.is(d.version, null);
  t.is(d.runtime, 'bwrap');
  t.is(version(), before);
  const json = await exec(e.id, { command: 'jq -c .list data.json; wc -c' , stdin: 'four' }, e.key);
  t.is(json.body.data.stdout, '[1,2]\n4\n');
  const outside = await exec(e.id, { command: 'cat ../outside/secret.md /work/../outside/secret.md; ls /' }, e.key);
  t.notRegex(outside.body.data.stdout, /not for the sandbox/);
});

test.serial('what the command changes becomes ONE version by the endpoint, deletions go to the trash', async (t) => {
  const e = await endpoint({ name: 'writer' });
  await c('POST', '/write', { path: 'work/gone.md', node_type: 'markdown', content: 'bye' });
  const before = version();
  const r = await exec(
    e.id,
    { command: "echo '# New' > new.md && sed -i 's/one/ONE/' notes.md && jq '.a = 2' data.json > t && mv t data.json && rm gone.md && mkdir -p empty && printf '\\000\\001' > blob.bin" },
    e.key,
  );
  t.is(r.status, 200, JSON.stringify(r.body));
  const d = r.body.data;
  t.is(d.exit_code, 0, d.stderr);
  t.is(d.version, before + 1);
  t.deepEqual(
    d.changes.map((x: { path: string; action: string; type: string }) => `${x.action} ${x.type} ${x.path}`),
    ['created file work/blob.bin', 'modified json work/data.json', 'created folder work/empty', 'deleted markdown work/gone.md', 'created markdown work/new.md', 'modified markdown work/notes.md'],
  );
  t.is(version(), before + 1, 'one commit');
  t.is((await c('GET', '/cat?path=work/notes.md')).body.data.content, 'line ONE\nline two\n');
  t.deepEqual((await c('GET', '/cat?path=work/data.json')).body.data.content, { a: 2, list: [1, 2] });
  t.is((await c('GET', '/cat?path=work/new.md')).body.data.content, '# New\n');
  t.is(server.services.content.findByPath(projectId, 'work/empty')?.type, 'folder');
  t.is(server.services.content.findByPath(projectId, 'work/blob.bin')?.size, 2);
  const trash = await c('GET', '/trash');
  t.true(JSON.stringify(trash.body.data).includes('work/gone.md'));
  const commit = server.services.content.commitsAfter(projectId, before, 5);
  t.is(commit.length, 1);
  t.like(commit[0].actor, { type: 'agent', id: e.id });
  t.regex(commit[0].message, /^exec: echo '# New' > new\.md/);
  t.true(commit[0].message.length < 90);
});

test.serial('a user token that may write the project runs commands as that user; readers, strangers and other keys may not', async (t) => {
  const e = await endpoint({ name: 'users' });
  const before = version();
  const r = await exec(e.id, { command: 'echo by-user > user.md' });
  t.is(r.status, 200);
  const [commit] = server.services.content.commitsAfter(projectId, before, 5);
  t.like(commit.actor, { type: 'user' });

  const { key: apiKey } = await createKey(server, token, projectId);
  const otherEndpoint = await endpoint({ name: 'other' });
  const otherProject = await createProject(server, token, orgId, 'sbx-other');
  const { key: foreignKey } = await createKey(server, token, otherProject);
  const stranger = await server.createUser('sbx-stranger@example.com');
  const after = version();
  t.is((await exec(e.id, { command: 'echo x > x.md' }, apiKey)).status, 403);
  t.is((await exec(e.id, { command: 'echo x > x.md' }, otherEndpoint.key)).status, 403);
  t.is((await exec(e.id, { command: 'echo x > x.md' }, foreignKey)).status, 403);
  t.is((await exec(e.id, { command: 'echo x > x.md' }, 'cns_not_a_key')).status, 401);
  t.is((await exec(e.id, { command: 'echo x > x.md' }, stranger.token)).status, 404);
  t.is((await server.api('POST', `/sandbox-endpoints/${e.id}/exec`, { body: { command: 'echo x > x.md' } })).status, 401);
  t.is((await server.api('GET', `/sandbox-endpoints/${e.id}`, { token: e.key })).status, 403, 'an endpoint key cannot manage endpoints');
  t.is(version(), after, 'nothing was written');
});

test.serial('a read endpoint mounts the folder read-only and writes nothing back', async (t) => {
  const e = await endpoint({ name: 'reader', mode: 'read' });
  const before = version();
  const r = await exec(e.id, { command: 'echo x > x.md; echo $?; rm notes.md; cat notes.md | head -1' }, e.key);
  t.is(r.status, 200);
  t.regex(r.body.data.stderr, /Read-only file system/);
  t.regex(r.body.data.stdout, /line/);
  t.is(r.body.data.version, null);
  t.is(version(), before);
});

test.serial('changes made while the command ran are merged three ways; a conflict writes nothing and says where', async (t) => {
  await c('POST', '/write', { path: 'work/merge.md', node_type: 'markdown', content: 'top\nmiddle\nbottom\n' });
  const e = await endpoint({ name: 'merger' });
  // The command signals that it has run (ready) and waits until the test lets it finish (go).
  const hold = HOLD;
  const running = exec(e.id, { command: `sed -i 's/bottom/BOTTOM/' merge.md; ${hold}`, timeout_s: 20 }, e.key);
  const ws = await heldWorkspace();
  await c('POST', '/write', { path: 'work/merge.md', node_type: 'markdown', content: 'TOP\nmiddle\nbottom\n' });
  await writeFile(join(ws, 'go'), '');
  const r = await running;
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(r.body.data.conflicts, []);
  const merged = r.body.data.changes.find((x: { path: string }) => x.path === 'work/merge.md');
  t.true(merged.merged);
  t.is((await c('GET', '/cat?path=work/merge.md')).body.data.content, 'TOP\nmiddle\nBOTTOM\n');

  const conflicting = exec(e.id, { command: `sed -i 's/middle/from-sandbox/' merge.md; echo new > also.md; ${hold}`, timeout_s: 20 }, e.key);
  const ws2 = await heldWorkspace();
  await c('POST', '/write', { path: 'work/merge.md', node_type: 'markdown', content: 'TOP\nfrom-person\nBOTTOM\n' });
  const before = version();
  await writeFile(join(ws2, 'go'), '');
  const cr = await conflicting;
  t.is(cr.status, 200);
  t.is(cr.body.data.version, null);
  t.is(cr.body.data.conflicts[0].path, 'work/merge.md');
  t.is(version(), before, 'nothing of the command was written');
  t.is(server.services.content.findByPath(projectId, 'work/also.md'), null);
  t.is((await c('GET', '/cat?path=work/merge.md')).body.data.content, 'TOP\nfrom-person\nBOTTOM\n');
});

test.serial('bad input is refused with 422 and runs nothing', async (t) => {
  const e = await endpoint({ name: 'bad', limits: { timeout_s: 5 } });
  const before = version();
  for (const [body, field] of [
    [{ command: '' }, 'command'],
    [{ command: '   ' }, 'command'],
    [{ command: 'x'.repeat(64 * 1024 + 1) }, 'command'],
    [{ command: 'é'.repeat(40 * 1024) }, 'command'],
    [{ command: 'echo a\u0000b' }, 'command'],
    [{ command: 'true', timeout_s: 0 }, 'timeout_s'],
    [{ command: 'true', timeout_s: 301 }, 'timeout_s'],
    [{ command: 'true', timeout_s: 6 }, 'timeout_s'],
    [{ command: 'true', timeout_s: 1.5 }, 'timeout_s'],
    [{ command: 'true', cwd: '/' }, 'cwd'],
    [{}, 'command'],
  ] as const) {
    const r = await exec(e.id, body);
    t.is(r.status, 422, JSON.stringify(body).slice(0, 80));
    t.true(JSON.stringify(r.body.details ?? r.body).includes(field), `${field}: ${JSON.stringify(r.body.details)}`);
  }
  for (const body of [
    { name: 'x', project_id: projectId, node_id: server.services.content.findByPath(projectId, 'work/notes.md')!.id },
    { name: 'x', project_id: projectId, node_id: workId, limits: { timeout_s: 301 } },
    { name: 'x', project_id: projectId, node_id: workId, limits: { gpu: 1 } },
    { name: 'x', project_id: projectId, node_id: workId, mode: 'write' },
    { name: '', project_id: projectId, node_id: workId },
  ]) {
    t.is((await server.api('POST', '/sandbox-endpoints/', { token, body })).status, 422, JSON.stringify(body));
  }
  t.is((await server.api('POST', '/sandbox-endpoints/', { token, body: { name: 'x', project_id: projectId, node_id: 'nod_missing' } })).status, 404);
  t.is((await exec('con_missing', { command: 'true' })).status, 404);
  t.is(version(), before);
});

test.serial('the endpoint follows its folder when it moves; a trashed folder answers 409', async (t) => {
  await c('POST', '/write', { path: 'mover/a.md', node_type: 'markdown', content: 'a' });
  const folder = server.services.content.findByPath(projectId, 'mover')!.id;
  const e = await endpoint({ name: 'mover', node_id: folder });
  await c('POST', '/mv', { old_path: 'mover', new_path: 'moved' });
  const r = await exec(e.id, { command: 'echo b > b.md; ls' }, e.key);
  t.is(r.status, 200, JSON.stringify(r.body));
  t.regex(r.body.data.stdout, /a\.md/);
  t.is(r.body.data.changes[0].path, 'moved/b.md');
  t.is((await server.api('GET', `/sandbox-endpoints/${e.id}`, { token })).body.data.path, 'moved');
  await c('POST', '/rm', { path: 'moved' });
  t.is((await exec(e.id, { command: 'ls' }, e.key)).status, 409);
});

test.serial('every sandbox route is in the OpenAPI document', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  for (const p of ['/sandbox-endpoints', '/sandbox-endpoints/{endpoint_id}', '/sandbox-endpoints/by-node/{node_id}', '/sandbox-endpoints/{endpoint_id}/regenerate-key', '/sandbox-endpoints/{endpoint_id}/exec']) {
    t.truthy(doc.paths[p] ?? doc.paths[`${p}/`], p);
  }
});

const heldWorkspace = () => heldIn(server.services.sandbox.pool);
