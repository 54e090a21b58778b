import test from 'ava';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newProject } from '../git/gitFixture.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('deleting a project while writes run: accepted writes finish, later ones get 404/409, nothing is left behind', async (t) => {
  const p = await newProject(server, 'doomed');
  const keep = await newProject(server, 'kept');
  const c = (project: string, i: number) =>
    server.api('POST', `/content/${project}/write`, { token: p.token, body: { path: `w/${i % 50}.md`, content: `v${i}`, node_type: 'markdown' } });
  const statuses: number[] = [];
  let stop = false;
  let started = 0;
  const writer = async (n: number) => {
    for (let i = n; !stop; i += 4) {
      started++;
      statuses.push((await c(p.projectId, i)).status);
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  // Delete once writes are flowing (poll, no sleep).
  const deadline = Date.now() + 30_000;
  while (statuses.filter((s) => s < 300).length < 20 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  const del = await server.api('DELETE', `/projects/${p.projectId}`, { token: p.token });
  // Writes keep hammering the deleted project for a while.
  const after = statuses.length;
  while (statuses.length < after + 40 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  stop = true;
  await Promise.all(writers);
  t.true(started > 0);

  t.is(del.status, 200, JSON.stringify(del.body));
  t.deepEqual([...new Set(statuses.filter((s) => ![200, 201, 404, 409].includes(s)))], [], 'no write may answer 500');
  t.true(statuses.some((s) => s === 404 || s === 409), 'writes after the deletion are refused');
  const dir = server.services.content.dataDir;
  t.false(existsSync(join(dir, `${p.projectId}.git`)), 'no repository folder is left');
  t.deepEqual(readdirSync(dir).filter((n) => n.includes(p.projectId)), []);
  t.false(server.services.content.listProjects().includes(p.projectId), 'reindex sees no ghost project');
  t.true(server.services.content.listProjects().includes(keep.projectId));
  t.is((await server.api('GET', `/projects/${p.projectId}`, { token: p.token })).status, 404);
  t.is((await c(p.projectId, 1)).status, 404);
  const rows = server.services.db.prepare('SELECT COUNT(*) AS n FROM nodes WHERE project_id = ?').get(p.projectId) as { n: number };
  t.is(rows.n, 0);
  // A second delete is a clean 404, and the other project is untouched.
  t.is((await server.api('DELETE', `/projects/${p.projectId}`, { token: p.token })).status, 404);
  t.is((await c(keep.projectId, 1)).status, 201);
});

test('content calls on a project being deleted are refused with 409, queued ones finish', async (t) => {
  const p = await newProject(server, 'draining');
  const store = server.services.content;
  const actor = { type: 'user' as const, id: 'usr_t', author: 't@example.com' };
  const queued = store.write(p.projectId, actor, { path: 'a.md', type: 'markdown', content: 'a' });
  const deleting = store.deleteProject(p.projectId);
  const late = await store.write(p.projectId, actor, { path: 'b.md', type: 'markdown', content: 'b' }).then(() => 'ok', (e: { code?: string }) => e.code);
  t.true(late === 'CONFLICT' || late === 'NOT_FOUND', String(late));
  t.is((await queued).changed, true);
  await deleting;
  t.false(existsSync(join(store.dataDir, `${p.projectId}.git`)));
  t.is(await store.write(p.projectId, actor, { path: 'c.md', type: 'markdown', content: 'c' }).then(() => 'ok', (e: { code?: string }) => e.code), 'NOT_FOUND');
  t.false(existsSync(join(store.dataDir, `${p.projectId}.git`)), 'a late write does not recreate the repository');
});
