import test from 'ava';
import { metadataCount } from '../helpers/metadata.ts';
import { sql } from 'kysely';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { submitFiles, waitAll } from './ingestClient.ts';

// The routes through HTTP with a real multipart client: answers, documented shapes, limits,
// refusals (nothing queued after any of them) and who may do what.
let server: TestServer;
let token: string;
let projectId: string;
let viewer: { token: string; id: string };
let outsider: { token: string; id: string };
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  ({ projectId } = await defaultProject(server, token));
  viewer = await server.createUser('ingest-viewer@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  outsider = await server.createUser('ingest-outsider@example.com');
});
test.after.always(() => server?.stop());

const check = (t: import('ava').ExecutionContext, method: string, path: string, res: Awaited<ReturnType<TestServer['api']>>) => assertDocumented(t, server.services, method, path, res);
const taskCount = () => metadataCount(server, sql`SELECT COUNT(*) AS n FROM ingest_tasks`);
const uploadsLeft = (s: TestServer) => {
  const dir = join(s.dataDir, 'tmp/ingest/uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
};

test.serial('submit answers 202 with one task per file; tasks, batch, list and health match their documented schemas', async (t) => {
  const res = await submitFiles(server, token, { project_id: projectId, path: 'docs/imports' }, [
    { name: 'a.txt', content: 'alpha' },
    { name: 'b.md', content: '# beta\n' },
    { name: 'c.json', content: '{"c": [1, 2]}', type: 'application/json' },
  ]);
  t.is(res.status, 202, JSON.stringify(res.body));
  check(t, 'post', '/ingest/submit/file', res);
  const tasks = res.body.data.tasks;
  t.deepEqual(tasks.map((x: any) => [x.source, x.kind, x.path]), [
    ['a.txt', 'file', 'docs/imports'],
    ['b.md', 'file', 'docs/imports'],
    ['c.json', 'file', 'docs/imports'],
  ]);
  t.true(tasks.every((x: any) => x.status === 'queued' || x.status === 'running'), 'answered before the work is done');
  const ids = tasks.map((x: any) => x.id);
  const done = await waitAll(server, token, ids);
  t.deepEqual(done.map((x) => x.status), ['succeeded', 'succeeded', 'succeeded']);
  t.deepEqual(done.map((x) => x.result.nodes.map((n: any) => [n.path, n.type])), [
    [['docs/imports/a.md', 'markdown']],
    [['docs/imports/b.md', 'markdown']],
    [['docs/imports/c.json', 'json']],
  ]);

  const one = await server.api('GET', `/ingest/tasks/${ids[2]}`, { token });
  check(t, 'get', '/ingest/tasks/{task_id}', one);
  t.is(one.body.data.result.nodes[0].version, 1);

  const batch = await server.api('POST', '/ingest/tasks/batch', { token, body: { task_ids: [ids[0], 'ing_nope', ids[1]] } });
  check(t, 'post', '/ingest/tasks/batch', batch);
  t.deepEqual(batch.body.data.tasks.map((x: any) => x.id), [ids[0], ids[1]]);
  t.deepEqual(batch.body.data.not_found, ['ing_nope'], 'an unknown id is reported, not a failure of the batch');

  const list = await server.api('GET', `/ingest/tasks?project_id=${projectId}&status=succeeded&limit=2`, { token });
  check(t, 'get', '/ingest/tasks', list);
  t.is(list.body.data.total, 3);
  t.deepEqual(list.body.data.tasks.map((x: any) => x.id), [ids[2], ids[1]], 'newest first, paged');
  const page2 = await server.api('GET', `/ingest/tasks?project_id=${projectId}&status=succeeded&limit=2&offset=2`, { token });
  t.deepEqual(page2.body.data.tasks.map((x: any) => x.id), [ids[0]]);
  t.is((await server.api('GET', `/ingest/tasks?project_id=${projectId}&status=failed`, { token })).body.data.total, 0);

  const health = await server.api('GET', '/ingest/health', { token });
  check(t, 'get', '/ingest/health', health);
  t.like(health.body.data, { queue: { queued: 0, running: 0 }, workers: { size: 2, busy: 0 } });
  t.true(health.body.data.converters.formats.some((f: any) => f.format === 'pdf' && f.available));
  t.deepEqual(uploadsLeft(server), [], "each request's upload folder is gone");
});

test.serial('tasks come in the order the files were sent, whatever order they finish writing in', async (t) => {
  const files = Array.from({ length: 12 }, (_, i) => ({ name: `n${i}.txt`, content: i % 3 === 0 ? 'x'.repeat(300_000) : `small ${i}` }));
  const res = await submitFiles(server, token, { project_id: projectId, path: 'order' }, files);
  t.is(res.status, 202);
  t.deepEqual(res.body.data.tasks.map((x: any) => x.source), files.map((f) => f.name));
  await waitAll(server, token, res.body.data.tasks.map((x: any) => x.id));
});

test.serial('the OpenAPI document describes the multipart body', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  const body = doc.paths['/ingest/submit/file'].post.requestBody.content['multipart/form-data'].schema;
  t.deepEqual(body.required.sort(), ['files', 'project_id']);
  t.like(body.properties.files, { type: 'array', minItems: 1, items: { type: 'string', format: 'binary' } });
  t.deepEqual(body.properties.mode.enum, ['markdown', 'json', 'raw']);
  t.is(doc.paths['/ingest/submit/saas'].post.requestBody.content['application/json'].schema.required.includes('source'), true);
});

test.serial('invalid input is 422 naming the field, and nothing is queued', async (t) => {
  const before = await taskCount();
  const file = [{ name: 'x.txt', content: 'x' }];
  const cases: [Record<string, string>, { name: string; content: string }[], string][] = [
    [{ path: 'a' }, file, 'project_id'],
    [{ project_id: projectId, mode: 'pdf' }, file, 'mode'],
    [{ project_id: projectId }, [], 'files'],
    [{ project_id: projectId, keep_original: 'maybe' }, file, 'keep_original'],
    [{ project_id: projectId, path: 'a/../b' }, file, 'path'],
    [{ project_id: projectId, path: '.trash/x' }, file, 'path'],
    [{ project_id: projectId, rule_id: 'rul_unknown' }, file, 'rule_id'],
  ];
  for (const [fields, files, field] of cases) {
    const res = await submitFiles(server, token, fields, files);
    t.is(res.status, 422, `${JSON.stringify(fields)}: ${JSON.stringify(res.body)}`);
    t.is(res.body.code, 'VALIDATION_ERROR');
    t.true(res.body.error.details.some((d: any) => d.field === field), `${field} named in ${JSON.stringify(res.body.error.details)}`);
  }
  // A field the route does not know would change what the request means if it were taken: refused, nothing queued.
  const queued = (await server.api('GET', `/ingest/tasks?project_id=${projectId}&limit=1`, { token })).body.data.total;
  const unknownField = await submitFiles(server, token, { project_id: projectId, target_path: 'elsewhere' }, file);
  t.is(unknownField.status, 422, JSON.stringify(unknownField.body));
  t.regex(JSON.stringify(unknownField.body.error.details), /target_path/);
  t.is((await server.api('GET', `/ingest/tasks?project_id=${projectId}&limit=1`, { token })).body.data.total, queued);
  const twice = new FormData();
  twice.append('project_id', projectId);
  twice.append('project_id', projectId);
  twice.append('files', new Blob(['x']), 'x.txt');
  const dup = await fetch(`${server.url}/api/v1/ingest/submit/file`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: twice });
  t.is(dup.status, 422, 'a field sent twice');
  const notMultipart = await server.api('POST', '/ingest/submit/file', { token, body: { project_id: projectId } });
  t.is(notMultipart.status, 422);
  t.is(notMultipart.body.error.details[0].field, 'body');
  const broken = await server.api('POST', '/ingest/submit/file', { token, raw: '--x\r\nnonsense', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
  t.is(broken.status, 422, JSON.stringify(broken.body));

  const wrote = await server.api('POST', `/content/${projectId}/write`, { token, body: { path: 'docs/file.md', node_type: 'markdown', content: 'x' } });
  t.is(wrote.status, 201, JSON.stringify(wrote.body));
  const onFile = await submitFiles(server, token, { project_id: projectId, path: 'docs/file.md' }, file);
  t.is(onFile.status, 409, 'the target folder is a markdown node');

  const saas: [unknown, string][] = [
    [{ project_id: projectId, source: { type: 'url' } }, 'source.url'],
    [{ project_id: projectId, source: { type: 'url', url: 'ftp://example.com/x' } }, 'source.url'],
    [{ project_id: projectId, source: { type: 'url', url: 'https://example.com', depth: 99 } }, 'source.depth'],
    [{ project_id: projectId, source: { type: 'url', url: 'https://example.com', max_pages: 21 } }, 'source.max_pages'],
    [{ project_id: projectId, source: { type: 'url', url: 'https://example.com', config: {} } }, 'source.config'],
    [{ project_id: projectId, source: { type: 'notion', config: { token: 'x' } } }, 'source.type'],
    [{ project_id: projectId, source: { type: 'folder', config: {} } }, 'source.type'],
    [{ project_id: projectId }, 'source'],
  ];
  for (const [body, field] of saas) {
    const res = await server.api('POST', '/ingest/submit/saas', { token, body });
    t.is(res.status, 422, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
    t.true(res.body.error.details.some((d: any) => d.field === field), `${field} in ${JSON.stringify(res.body.error.details)}`);
  }
  const unknown = await server.api('POST', '/ingest/submit/saas', { token, body: { project_id: projectId, source: { type: 'notion', config: {} } } });
  t.regex(unknown.body.message, /unknown source type notion; supported source types: url/);
  const folder = await server.api('POST', '/ingest/submit/saas', { token, body: { project_id: projectId, source: { type: 'folder', config: {} } } });
  t.regex(folder.body.message, /sync connector.*supported source types: url/);
  t.is(await taskCount(), before, 'nothing was queued');
  t.deepEqual(uploadsLeft(server), []);
});

test.serial('limits: a file over CNS_INGEST_MAX_FILE_BYTES or more files than CNS_INGEST_MAX_FILES is 413, and nothing is kept', async (t) => {
  const small = await startTestServer({}, { CNS_INGEST_MAX_FILE_BYTES: '1000', CNS_INGEST_MAX_FILES: '2' });
  t.teardown(() => small.stop());
  const tok = (await small.login()).token;
  const { projectId: pid } = await defaultProject(small, tok);
  const big = await submitFiles(small, tok, { project_id: pid }, [{ name: 'big.txt', content: 'x'.repeat(5000) }]);
  t.is(big.status, 413, JSON.stringify(big.body));
  t.is(big.body.code, 'PAYLOAD_TOO_LARGE');
  t.regex(big.body.message, /larger than 1000 bytes.*CNS_INGEST_MAX_FILE_BYTES/);
  const second = await submitFiles(small, tok, { project_id: pid }, [
    { name: 'ok.txt', content: 'x'.repeat(900) },
    { name: 'big.txt', content: 'x'.repeat(1001) },
  ]);
  t.is(second.status, 413, 'the second file is over the limit');
  const many = await submitFiles(small, tok, { project_id: pid }, [
    { name: '1.txt', content: '1' },
    { name: '2.txt', content: '2' },
    { name: '3.txt', content: '3' },
  ]);
  t.is(many.status, 413, JSON.stringify(many.body));
  t.regex(many.body.message, /More than 2 files.*CNS_INGEST_MAX_FILES/);
  const exact = await submitFiles(small, tok, { project_id: pid }, [
    { name: '1.txt', content: 'x'.repeat(1000) },
    { name: '2.txt', content: '2' },
  ]);
  t.is(exact.status, 202, 'at the limits is fine');
  await waitAll(small, tok, exact.body.data.tasks.map((x: any) => x.id));
  t.is(await metadataCount(small, sql`SELECT COUNT(*) AS n FROM ingest_tasks`), 2, 'only the accepted submission was queued');
  t.deepEqual(uploadsLeft(small), [], 'partial uploads are removed');
});

test.serial('who may: viewer 403, outsider 404, a scoped key outside its scope 403 and inside 202, a read key 403; tasks are seen by scope', async (t) => {
  const file = [{ name: 'w.txt', content: 'who' }];
  const asViewer = await submitFiles(server, viewer.token, { project_id: projectId, path: 'team' }, file);
  t.is(asViewer.status, 403);
  const asOutsider = await submitFiles(server, outsider.token, { project_id: projectId, path: 'team' }, file);
  t.is(asOutsider.status, 404);
  const scoped = await createKey(server, token, projectId, { scope_path: 'team/a', mode: 'read_write' });
  const outside = await submitFiles(server, scoped.key, { project_id: projectId, path: 'team/b' }, file);
  t.is(outside.status, 403);
  t.regex(outside.body.message, /limited to "team\/a"/);
  const root = await submitFiles(server, scoped.key, { project_id: projectId }, file);
  t.is(root.status, 403, 'the project root is outside a scoped key too');
  const readKey = await createKey(server, token, projectId, { mode: 'read' });
  t.is((await submitFiles(server, readKey.key, { project_id: projectId, path: 'team' }, file)).status, 403);
  t.is((await server.api('POST', '/ingest/submit/saas', { token: viewer.token, body: { project_id: projectId, source: { type: 'url', url: 'https://example.com' } } })).status, 403);
  t.is((await server.api('POST', '/ingest/submit/saas', { token: outsider.token, body: { project_id: projectId, source: { type: 'url', url: 'https://example.com' } } })).status, 404);

  const inside = await submitFiles(server, scoped.key, { project_id: projectId, path: 'team/a/in' }, file);
  t.is(inside.status, 202);
  const insideId = inside.body.data.tasks[0].id;
  const mine = await submitFiles(server, token, { project_id: projectId, path: 'team/b' }, file);
  const otherId = mine.body.data.tasks[0].id;
  await waitAll(server, token, [insideId, otherId]);

  t.is((await server.api('GET', `/ingest/tasks/${insideId}`, { token: viewer.token })).status, 200, 'a viewer reads tasks');
  t.is((await server.api('DELETE', `/ingest/tasks/${insideId}`, { token: viewer.token })).status, 403, 'but does not cancel them');
  t.is((await server.api('GET', `/ingest/tasks/${insideId}`, { token: outsider.token })).status, 404);
  t.is((await server.api('DELETE', `/ingest/tasks/${insideId}`, { token: outsider.token })).status, 404);
  t.is((await server.api('GET', `/ingest/tasks?project_id=${projectId}`, { token: outsider.token })).status, 404);
  t.is((await server.api('GET', `/ingest/tasks/${otherId}`, { token: scoped.key })).status, 404, "a task outside the key's scope is not found");
  const batch = await server.api('POST', '/ingest/tasks/batch', { token: scoped.key, body: { task_ids: [insideId, otherId] } });
  t.deepEqual(batch.body.data.tasks.map((x: any) => x.id), [insideId]);
  t.deepEqual(batch.body.data.not_found, [otherId]);
  const listed = await server.api('GET', `/ingest/tasks?project_id=${projectId}`, { token: scoped.key });
  t.deepEqual(listed.body.data.tasks.map((x: any) => x.id), [insideId], 'the list is filtered by scope');
  t.is(listed.body.data.total, 1);
  const outsiderBatch = await server.api('POST', '/ingest/tasks/batch', { token: outsider.token, body: { task_ids: [insideId] } });
  t.deepEqual(outsiderBatch.body.data.not_found, [insideId]);
});
