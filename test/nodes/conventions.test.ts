import test from 'ava';
import { createKey } from '../helpers/project.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

/** Issue 9, items 24-26: audit routes, one rule per answer, errors always in the envelope. */
let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

const content = (route: string, body?: unknown) => f.call(body === undefined ? 'GET' : 'POST', `/content/${f.pid}${route}`, body);

test('Markdown content is `content` in every read of the id surface (versions too); the path surface keeps content_text alongside', async (t) => {
  const md = await f.make('markdown', 'conv.md', null, '# one');
  t.is((await f.call('GET', `/nodes/${md.id}`)).body.data.content, '# one');
  const v1 = await f.call('GET', `/nodes/${md.id}/versions/1`);
  t.is(v1.body.data.content, '# one');
  const collab = await f.call('GET', `/collab/nodes/${md.id}/versions/1`);
  if (collab.status === 200) t.is(collab.body.data.content, '# one');
  const cat = await content('/cat?path=conv.md');
  t.is(cat.body.data.content, '# one');
  t.is(cat.body.data.content_text, '# one', 'the spec field stays');
});

test.serial('PUT /nodes/{id} with a new name and content is one update (old path recorded), not "move" with "2 changes"', async (t) => {
  const md = await f.make('markdown', 'before.md', null, 'a');
  const res = await f.call('PUT', `/nodes/${md.id}`, { name: 'after.md', content: 'b' });
  t.is(res.status, 200);
  t.is(res.body.data.path, 'after.md');
  t.is(res.body.data.content, 'b');
  const versions = (await f.call('GET', `/nodes/${md.id}/versions`)).body.data.versions;
  t.is(versions[0].operation, 'update');
  t.is(versions[0].message, 'update after.md (renamed from before.md)');
  const audit = (await f.call('GET', `/nodes/${md.id}/audit-logs`)).body.data.logs;
  t.is(audit[0].action, 'update');
  t.is(audit[0].details.old_path, 'before.md');
  t.is(audit[0].details.new_path, 'after.md');
  // The commit's trailers say the same: a rebuild from git finds the same index.
  const report = await f.server.services.content.reindexProject(f.pid);
  t.deepEqual(report.differences, []);
  t.deepEqual(report.missingNodes, []);
});

test('node rollback answers with the content, on both surfaces', async (t) => {
  const doc = await f.make('json', 'roll.json', null, { v: 1 });
  await f.call('PUT', `/nodes/${doc.id}`, { content: { v: 2 } });
  const byId = await f.call('POST', `/nodes/${doc.id}/rollback/1`);
  t.is(byId.status, 200);
  t.deepEqual(byId.body.data.content, { v: 1 });
  const md = await f.make('markdown', 'roll.md', null, 'first');
  await f.call('PUT', `/nodes/${md.id}`, { content: 'second' });
  const byPath = await content('/rollback', { path: 'roll.md', version: 1 });
  t.is(byPath.status, 200);
  t.is(byPath.body.data.content, 'first');
  t.is(byPath.body.data.content_text, 'first');
});

test('a duplicate create says the node already exists (not "is at version 1, not 0")', async (t) => {
  await f.make('json', 'dup.json', null, { a: 1 });
  const res = await f.call('POST', '/nodes/json', { project_id: f.pid, name: 'dup.json', content: { a: 2 } });
  t.is(res.status, 409);
  t.regex(res.body.message, /already exists/);
  t.notRegex(res.body.message, /version 1, not 0/);
  // A write with base_version 0 ("must not exist yet") is a version check: it says so as the README does.
  const byPath = await content('/write', { path: 'dup.json', node_type: 'json', content: { a: 3 }, base_version: 0 });
  t.is(byPath.status, 409);
  t.is(byPath.body.message, 'dup.json is at version 1, not 0');
});

test('a path\'s audit log includes its trash event; GET /projects/{id}/audit-logs lists the project\'s entries, pushes included', async (t) => {
  await content('/write', { path: 'audited/a.md', node_type: 'markdown', content: 'x' });
  await content('/rm', { path: 'audited/a.md' });
  const byPath = await f.call('GET', `/nodes/audited/a.md/audit-logs?project_id=${f.pid}`);
  t.is(byPath.status, 200);
  t.deepEqual(byPath.body.data.logs.map((l: { action: string }) => l.action), ['trash', 'create']);

  // A push's audit row has path '' and no node: the project route shows it.
  f.server.services.db
    .prepare(`INSERT INTO content_audit_log (project_id, node_id, path, action, actor_type, actor_id, author, details, created_at) VALUES (?, '', '', 'push', 'user', 'usr_x', 'x@example.com', ?, ?)`)
    .run(f.pid, JSON.stringify({ ref: 'refs/heads/main', commits: 1 }), new Date().toISOString());
  const all = await f.call('GET', `/projects/${f.pid}/audit-logs?limit=1000`);
  t.is(all.status, 200, JSON.stringify(all.body));
  const push = all.body.data.logs.find((l: { action: string }) => l.action === 'push');
  t.is(push?.path, '');
  t.is(push?.details.commits, 1);
  t.true(all.body.data.logs.some((l: { action: string; path: string }) => l.action === 'trash' && l.path.startsWith('.trash/')));
  const page1 = await f.call('GET', `/projects/${f.pid}/audit-logs?limit=2`);
  t.is(page1.body.data.logs.length, 2);
  t.truthy(page1.body.data.next_before);
  const page2 = await f.call('GET', `/projects/${f.pid}/audit-logs?limit=2&before=${page1.body.data.next_before}`);
  t.true(page2.body.data.logs.every((l: { id: number }) => l.id < page1.body.data.next_before));

  const scoped = await createKey(f.server, f.token, f.pid, { scope_path: 'audited', mode: 'read' });
  const asKey = await f.call('GET', `/projects/${f.pid}/audit-logs`, undefined, scoped.key);
  t.is(asKey.status, 200);
  t.true(asKey.body.data.logs.length > 0);
  const inScope = (p?: string) => p === 'audited' || (p ?? '').startsWith('audited/');
  t.true(asKey.body.data.logs.every((l: { path: string; details: { old_path?: string } }) => inScope(l.path) || inScope(l.details.old_path)));
  t.false(asKey.body.data.logs.some((l: { action: string }) => l.action === 'push'), 'project-wide rows are not a scoped key\'s business');
  const stranger = await f.server.createUser(`audit-stranger-${process.pid}@example.com`);
  t.is((await f.call('GET', `/projects/${f.pid}/audit-logs`, undefined, stranger.token)).status, 404);
});

test('an unsupported method answers 405 in the envelope with Allow; params errors name snake_case fields', async (t) => {
  const res = await f.call('PATCH', '/nodes/folder', {});
  t.is(res.status, 405);
  t.regex(res.headers.get('content-type') ?? '', /application\/json/);
  t.false(res.body.success);
  t.is(res.body.error.code, 'METHOD_NOT_ALLOWED');
  t.truthy(res.headers.get('allow'));
  t.true(res.body.error.details.allow.includes('POST'));

  const folder = await f.make('folder', 'snaps');
  const bad = await f.call('POST', `/nodes/${folder.id}/rollback-snapshot/not-a-commit`);
  t.is(bad.status, 422);
  t.is(bad.body.error.details[0].field, 'snapshot_id');
  t.notRegex(bad.body.message, /snapshotId/);
});
