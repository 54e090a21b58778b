import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let userId: string;
let projectId: string;
let orgId: string;

test.before(async () => {
  server = await startTestServer();
  const login = await server.login();
  token = login.token;
  userId = login.user.id;
  ({ projectId, orgId } = await defaultProject(server, token));
});
test.after.always(async () => server?.stop());

const api = (method: string, path: string, body?: unknown, t = token) => server.api(method, path, { token: t, body });
const check = (t: import('ava').ExecutionContext, method: string, path: string, res: ApiResponse) => assertDocumented(t, server.services, method, path, res);

async function createTable(body: Record<string, unknown>, t = token): Promise<{ id: string; node_id: string; path: string; version: number }> {
  const res = await api('POST', '/tables/', { project_id: projectId, ...body }, t);
  if (res.status !== 201) throw new Error(`create table: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}
const data = (id: string, pointer?: string, t = token) => api('GET', `/tables/${id}/data${pointer === undefined ? '' : `?path=${encodeURIComponent(pointer)}`}`, undefined, t);
const put = (id: string, body: Record<string, unknown>, t = token) => api('PUT', `/tables/${id}/data`, body, t);
const post = (id: string, body: Record<string, unknown>, t = token) => api('POST', `/tables/${id}/data`, body, t);
const del = (id: string, pointer: string, extra = '', t = token) => api('DELETE', `/tables/${id}/data?path=${encodeURIComponent(pointer)}${extra}`, undefined, t);
const versionsOf = async (nodeId: string) => (await api('GET', `/nodes/${nodeId}/versions?limit=1000`)).body.data.versions as { version: number; actor_id: string; actor_type: string; message: string }[];

test('a table is created as a json node, listed, read, renamed and deleted (its node goes to the trash)', async (t) => {
  const created = await api('POST', '/tables/', { project_id: projectId, name: 'Customer List', description: 'who buys' });
  t.is(created.status, 201, JSON.stringify(created.body));
  check(t, 'post', '/tables', created);
  const table = created.body.data;
  t.like(table, { name: 'Customer List', description: 'who buys', project_id: projectId, org_id: orgId, path: 'tables/customer-list.json', version: 1, node_state: 'active', json_schema: null, created_by: userId });

  // The node is an ordinary json node of the project: the content API sees it.
  const cat = await contentApi(server, token, projectId)('GET', '/cat?path=tables/customer-list.json');
  t.like(cat.body.data, { id: table.node_id, type: 'json', content: [] });

  for (const path of [`/tables/?org_id=${orgId}`, `/tables/?project_id=${projectId}`]) {
    const list = await api('GET', path);
    check(t, 'get', '/tables', list);
    t.true(list.body.data.tables.some((x: { id: string }) => x.id === table.id), path);
  }
  t.is((await api('GET', '/tables/')).status, 422, 'org_id or project_id is required');
  const got = await api('GET', `/tables/${table.id}`);
  check(t, 'get', '/tables/{table_id}', got);
  t.deepEqual(got.body.data, table);

  const renamed = await api('PUT', `/tables/${table.id}`, { name: 'Customers', description: 'all of them' });
  check(t, 'put', '/tables/{table_id}', renamed);
  t.like(renamed.body.data, { name: 'Customers', description: 'all of them', path: 'tables/customer-list.json' });
  t.is((await api('PUT', `/tables/${table.id}`, { nme: 'typo' })).status, 422, 'an unknown field is refused, not ignored');

  const taken = await api('POST', '/tables/', { project_id: projectId, name: 'Customer list' });
  t.is(taken.status, 409, 'the default path is taken');
  t.regex(taken.body.message, /already at tables\/customer-list\.json/);

  const deleted = await api('DELETE', `/tables/${table.id}`);
  check(t, 'delete', '/tables/{table_id}', deleted);
  t.like(deleted.body.data, { id: table.id, deleted: true });
  t.regex(deleted.body.data.trash_path, /^\.trash\//);
  t.is((await api('GET', `/tables/${table.id}`)).status, 404);
  const trash = await contentApi(server, token, projectId)('GET', '/trash');
  t.true(JSON.stringify(trash.body.data).includes(table.node_id), 'the node waits in the trash');
});

test('creation: custom path and data; bad input is 422 and creates nothing', async (t) => {
  const table = await createTable({ name: 'inventory', path: 'data/inventory.json', data: { items: [] } });
  t.is(table.path, 'data/inventory.json');
  t.deepEqual((await data(table.id)).body.data.value, { items: [] });
  for (const [body, field] of [
    [{ name: 'x', data: 'scalar' }, 'data'],
    [{ name: 'x', data: 5 }, 'data'],
    [{ name: 'x', path: '/abs.json' }, 'path'],
    [{ name: 'x', path: '.trash/x.json' }, 'path'],
    [{ name: '' }, 'name'],
    [{ name: 'x', json_schema: { type: 'nonsense' } }, 'json_schema'],
    [{ name: 'x', json_schema: { type: 'string', format: 'email' } }, 'json_schema'],
    [{ name: 'x', json_schema: { typo_keyword: true } }, 'json_schema'],
    [{ name: 'x', json_schema: { $ref: 'https://example.com/remote.json' } }, 'json_schema'],
    [{ name: 'x', rows: [] }, 'body'],
  ] as const) {
    const res = await api('POST', '/tables/', { project_id: projectId, ...body });
    t.is(res.status, 422, JSON.stringify(body));
    t.true(res.body.error.details.some((d: { field: string }) => d.field === field), `${JSON.stringify(body)}: ${JSON.stringify(res.body.error.details)}`);
  }
  t.is(server.services.content.findByPath(projectId, 'tables/x.json'), null, 'nothing was written');
  t.is((await api('POST', '/tables/', { project_id: 'prj_nope', name: 'x' })).status, 404);
});

test('data verbs: GET, PUT (replace, create, "-"), POST (append, merge), DELETE, with ~0 and ~1 escapes', async (t) => {
  const table = await createTable({ name: 'verbs', data: { rows: [{ id: 1 }], 'a/b': { 'c~d': 1 }, meta: { n: 1 } } });
  const whole = await data(table.id, '/');
  check(t, 'get', '/tables/{table_id}/data', whole);
  t.like(whole.body.data, { table_id: table.id, node_id: table.node_id, version: 1, pointer: '' });
  t.is(whole.body.data.value.meta.n, 1);
  t.deepEqual((await data(table.id)).body.data.value, whole.body.data.value, 'no path is the whole table');
  t.is((await data(table.id, '/a~1b/c~0d')).body.data.value, 1, '~1 is / and ~0 is ~');

  const replaced = await put(table.id, { path: '/a~1b/c~0d', value: 2 });
  t.is(replaced.status, 200);
  check(t, 'put', '/tables/{table_id}/data', replaced);
  t.like(replaced.body.data, { pointer: '/a~1b/c~0d', created: false, changed: true, version: 2 });
  const created = await put(table.id, { path: '/a~1b/new~1key', value: { deep: true } });
  t.is(created.status, 201);
  t.like(created.body.data, { created: true, version: 3 });
  t.deepEqual((await data(table.id, '/a~1b')).body.data.value, { 'c~d': 2, 'new/key': { deep: true } });

  const dash = await put(table.id, { path: '/rows/-', value: { id: 2 } });
  t.is(dash.status, 201);
  t.is(dash.body.data.pointer, '/rows/1', '"-" is resolved to the index it took');
  const replacedRow = await put(table.id, { path: '/rows/0', value: { id: 10 } });
  t.is(replacedRow.status, 200);

  const appended = await post(table.id, { path: '/rows', data: { id: 3 } });
  check(t, 'post', '/tables/{table_id}/data', appended);
  t.like(appended.body.data, { pointer: '/rows/2', changed: true });
  const merged = await post(table.id, { path: '/meta', data: { m: 2, n: 5 } });
  t.is(merged.status, 200);
  t.deepEqual((await data(table.id, '/meta')).body.data.value, { n: 5, m: 2 });
  t.deepEqual((await data(table.id, '/rows')).body.data.value, [{ id: 10 }, { id: 2 }, { id: 3 }]);

  const removed = await del(table.id, '/rows/0');
  check(t, 'delete', '/tables/{table_id}/data', removed);
  t.like(removed.body.data, { pointer: '/rows/0', changed: true });
  t.deepEqual((await data(table.id, '/rows')).body.data.value, [{ id: 2 }, { id: 3 }], 'the array closed the gap');
  t.is((await del(table.id, '/a~1b/new~1key')).status, 200);
  t.deepEqual((await data(table.id, '/a~1b')).body.data.value, { 'c~d': 2 });

  // "__proto__" named by a pointer is a key like any other: stored as data, never as a prototype (bodies may not carry one).
  t.is((await put(table.id, { path: '/meta/__proto__', value: { polluted: true } })).status, 201);
  t.deepEqual((await data(table.id, '/meta/__proto__')).body.data.value, { polluted: true });
  t.is(({} as Record<string, unknown>).polluted, undefined);
  t.is((await del(table.id, '/meta/__proto__')).status, 200);
  t.deepEqual((await data(table.id, '/meta')).body.data.value, { n: 5, m: 2 });

  // A change that changes nothing makes no version.
  const before = (await data(table.id)).body.data.version;
  const same = await put(table.id, { path: '/meta/n', value: 5 });
  t.like(same.body.data, { changed: false, version: before });

  // The whole table can be replaced, but must stay an object or an array.
  t.is((await put(table.id, { path: '', value: [1, 2] })).status, 200);
  t.deepEqual((await data(table.id)).body.data.value, [1, 2]);
  const scalarRoot = await put(table.id, { path: '/', value: 'flat' });
  t.is(scalarRoot.status, 422);
  t.is((await post(table.id, { data: 3 })).body.data.pointer, '/2', 'POST without path appends to the root array');

  // The content API reads what the table wrote.
  const cat = await contentApi(server, token, projectId)('GET', `/cat?path=${encodeURIComponent(table.path)}`);
  t.deepEqual(cat.body.data.content, [1, 2, 3]);
});

test('pointer errors: a missing member is 404, a pointer through a non-container or not an index is 422; nothing changes', async (t) => {
  const table = await createTable({ name: 'pointers', data: { s: 'text', n: null, list: [1, 2], obj: {} } });
  const cases: [string, ApiResponse, number][] = [
    ['GET missing member', await data(table.id, '/nope'), 404],
    ['GET index past the end', await data(table.id, '/list/2'), 404],
    ['GET "-"', await data(table.id, '/list/-'), 404],
    ['GET through a string', await data(table.id, '/s/0'), 422],
    ['GET through null', await data(table.id, '/n/x'), 422],
    ['GET not an index', await data(table.id, '/list/x'), 422],
    ['GET leading zero', await data(table.id, '/list/01'), 422],
    ['GET no leading slash', await data(table.id, 'list'), 422],
    ['GET bad escape', await data(table.id, '/a~2b'), 422],
    ['DELETE missing member', await del(table.id, '/nope'), 404],
    ['DELETE missing index', await del(table.id, '/list/5'), 404],
    ['DELETE the whole table', await del(table.id, ''), 422],
    ['DELETE through a string', await del(table.id, '/s/x'), 422],
    ['PUT with a missing parent', await put(table.id, { path: '/missing/child', value: 1 }), 404],
    ['PUT past the end of an array', await put(table.id, { path: '/list/5', value: 1 }), 422],
    ['PUT through a string', await put(table.id, { path: '/s/x', value: 1 }), 422],
    ['PUT without value', await put(table.id, { path: '/x' }), 422],
    ['POST into a missing member', await post(table.id, { path: '/nope', data: 1 }), 404],
    ['POST into a string', await post(table.id, { path: '/s', data: 1 }), 422],
    ['POST a non-object into an object', await post(table.id, { path: '/obj', data: [1] }), 422],
    ['POST without data', await post(table.id, { path: '/list' }), 422],
  ];
  for (const [what, res, status] of cases) {
    t.is(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
    t.false(res.body.success, what);
  }
  const through = cases.find(([w]) => w === 'GET through a string')![1];
  t.regex(through.body.message, /\/s is a string/);
  t.is(through.body.error.details[0].field, 'path');
  t.regex(cases[0]![1].body.message, /Nothing at JSON Pointer \/nope/);
  t.is((await data(table.id)).body.data.version, 1, 'no failed change made a version');
});

test('json_schema: every change is validated, a violation is 422 with the schema errors; a new schema must accept the data', async (t) => {
  const schema = {
    type: 'array',
    items: { type: 'object', required: ['id', 'email'], properties: { id: { type: 'integer' }, email: { type: 'string', minLength: 3 } }, additionalProperties: false },
  };
  const badInitial = await api('POST', '/tables/', { project_id: projectId, name: 'people-bad', json_schema: schema, data: [{ id: 'one' }] });
  t.is(badInitial.status, 422);
  t.true(badInitial.body.error.details.some((d: { pointer: string; keyword: string }) => d.pointer === '/0/id' && d.keyword === 'type'));

  const table = await createTable({ name: 'people', json_schema: schema, data: [{ id: 1, email: 'a@x' }] });
  t.deepEqual((await api('GET', `/tables/${table.id}`)).body.data.json_schema, schema);
  const violation = await post(table.id, { path: '', data: { id: 'two', extra: true } });
  t.is(violation.status, 422);
  t.regex(violation.body.message, /JSON Schema/);
  const details = violation.body.error.details as { field: string; pointer: string; keyword: string; message: string }[];
  t.true(details.some((d) => d.pointer === '/1/id' && d.keyword === 'type'), JSON.stringify(details));
  t.true(details.some((d) => d.keyword === 'required'));
  t.true(details.some((d) => d.keyword === 'additionalProperties'));
  t.true(details.every((d) => d.field === 'data'));
  t.is((await put(table.id, { path: '/0/email', value: 'x' })).status, 422, 'minLength');
  t.is((await put(table.id, { path: '/0/email', value: 'ok@x' })).status, 200);
  t.is((await post(table.id, { path: '', data: { id: 2, email: 'b@x' } })).status, 200);
  t.is((await data(table.id)).body.data.version, 3, 'only the valid changes made versions');

  const stricter = await api('PUT', `/tables/${table.id}`, { json_schema: { type: 'array', maxItems: 1 } });
  t.is(stricter.status, 422, 'the data as it is must match a new schema');
  t.true(stricter.body.error.details.some((d: { keyword: string; field: string }) => d.keyword === 'maxItems' && d.field === 'json_schema'));
  t.deepEqual((await api('GET', `/tables/${table.id}`)).body.data.json_schema, schema, 'the schema did not change');
  t.is((await api('PUT', `/tables/${table.id}`, { json_schema: { type: 'not-a-type' } })).status, 422);
  const modern = await api('PUT', `/tables/${table.id}`, { json_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'object' }] } });
  t.is(modern.status, 200, JSON.stringify(modern.body));
  const cleared = await api('PUT', `/tables/${table.id}`, { json_schema: null });
  t.is(cleared.body.data.json_schema, null);
  t.is((await post(table.id, { path: '', data: 'anything goes now' })).status, 200);
});

test('base_version: a stale change is 409 and changes nothing; the current version goes through', async (t) => {
  const table = await createTable({ name: 'versioned', data: { n: 0 } });
  t.is((await put(table.id, { path: '/n', value: 1, base_version: 1 })).status, 200);
  const stale = await put(table.id, { path: '/n', value: 99, base_version: 1 });
  t.is(stale.status, 409);
  t.like(stale.body.error.details, { base_version: 1, version: 2 });
  t.is((await post(table.id, { path: '', data: { x: 1 }, base_version: 1 })).status, 409);
  t.is((await del(table.id, '/n', '&base_version=1')).status, 409);
  t.is((await data(table.id, '/n')).body.data.value, 1);
  t.is((await del(table.id, '/n', '&base_version=2')).status, 200);
  t.is((await put(table.id, { path: '/n', value: 1, base_version: 0 })).status, 422, 'versions start at 1');
});

test('history: one version per change with the caller as actor; rollback through the content API restores the data', async (t) => {
  const table = await createTable({ name: 'history', data: [] });
  await post(table.id, { data: { id: 1 } });
  await post(table.id, { data: { id: 2 } });
  await put(table.id, { path: '/0/id', value: 100 });
  await del(table.id, '/1');
  const versions = await versionsOf(table.node_id);
  t.deepEqual(versions.map((v) => v.version), [5, 4, 3, 2, 1]);
  t.true(versions.every((v) => v.actor_type === 'user' && v.actor_id === userId));
  t.regex(versions[0]!.message, /table history: delete \/1/);
  t.regex(versions[2]!.message, /table history: append to/);
  const diff = await api('GET', `/nodes/${table.node_id}/diff/3/4`);
  t.is(diff.status, 200);
  t.true(JSON.stringify(diff.body.data).includes('100'));

  t.deepEqual((await data(table.id)).body.data.value, [{ id: 100 }]);
  const rolled = await api('POST', `/nodes/${table.node_id}/rollback/3`, {});
  t.is(rolled.status, 200, JSON.stringify(rolled.body));
  const after = await data(table.id);
  t.deepEqual(after.body.data.value, [{ id: 1 }, { id: 2 }], 'the table reads the rolled-back node');
  t.is(after.body.data.version, 6);
  // And the next change builds on the rolled-back data.
  t.is((await post(table.id, { data: { id: 3 } })).body.data.version, 7);
  t.deepEqual((await data(table.id)).body.data.value, [{ id: 1 }, { id: 2 }, { id: 3 }]);
});

test('concurrent changes without base_version all land, one version each', async (t) => {
  const table = await createTable({ name: 'busy', data: [] });
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => post(table.id, { data: i })));
  t.true(results.every((r) => r.status === 200), JSON.stringify(results.map((r) => r.status)));
  const value = (await data(table.id)).body.data.value as number[];
  t.deepEqual([...value].sort((a, b) => a - b), Array.from({ length: 12 }, (_, i) => i));
  t.is((await versionsOf(table.node_id)).length, 13);
});

test('the node is an ordinary node: written, moved, trashed, restored and deleted through the content API, the table follows', async (t) => {
  const c = contentApi(server, token, projectId);
  const table = await createTable({ name: 'follow', path: 'follow/t.json', data: { a: 1 } });
  // Written through the content API: the table reads the new version.
  t.is((await c('POST', '/write', { path: 'follow/t.json', node_type: 'json', content: { a: 2 } })).status, 200);
  t.is((await data(table.id, '/a')).body.data.value, 2);
  t.is((await put(table.id, { path: '/b', value: 3 })).status, 201);
  t.deepEqual((await c('GET', '/cat?path=follow/t.json')).body.data.content, { a: 2, b: 3 });

  // Moved: followed by node id.
  t.is((await c('POST', '/mv', { old_path: 'follow/t.json', new_path: 'moved/t2.json' })).status, 200);
  t.like((await api('GET', `/tables/${table.id}`)).body.data, { path: 'moved/t2.json', node_state: 'active' });
  t.is((await put(table.id, { path: '/c', value: 4 })).status, 201);

  // Trashed: the record says so, data answers 409 until the node is restored.
  const rm = await c('POST', '/rm', { path: 'moved/t2.json' });
  t.is(rm.status, 200);
  t.like((await api('GET', `/tables/${table.id}`)).body.data, { node_state: 'trashed', path: 'moved/t2.json' });
  const trashedRead = await data(table.id);
  t.is(trashedRead.status, 409);
  t.regex(trashedRead.body.message, /in the trash .*restore it/);
  t.is((await put(table.id, { path: '/d', value: 5 })).status, 409);
  t.is((await c('POST', '/restore', { trash_path: rm.body.data.trash_path, original_path: 'moved/t2.json' })).status, 200);
  t.deepEqual((await data(table.id)).body.data.value, { a: 2, b: 3, c: 4 });

  // Permanently deleted: 404 saying so; the record can still be deleted.
  t.is((await c('POST', '/rm', { path: 'moved/t2.json', permanent: true })).status, 200);
  t.like((await api('GET', `/tables/${table.id}`)).body.data, { node_state: 'deleted', version: null, path: 'follow/t.json' });
  const gone = await data(table.id);
  t.is(gone.status, 404);
  t.regex(gone.body.message, /permanently deleted/);
  const dropped = await api('DELETE', `/tables/${table.id}`);
  t.like(dropped.body.data, { deleted: true, trash_path: null });
  t.is((await api('GET', `/tables/${table.id}`)).status, 404);
});

test('authorization: a viewer reads only, an outsider sees nothing, a key reaches its scope only', async (t) => {
  const table = await createTable({ name: 'guarded', path: 'docs/guarded.json', data: { rows: [1] } });
  const other = await createTable({ name: 'elsewhere', path: 'private/other.json', data: [] });

  const viewer = await server.createUser('tables-viewer@example.com');
  t.is((await api('POST', `/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' })).status, 201);
  t.is((await data(table.id, '/rows', viewer.token)).body.data.value[0], 1);
  t.is((await api('GET', `/tables/${table.id}`, undefined, viewer.token)).status, 200);
  t.is((await api('GET', `/tables/?project_id=${projectId}`, undefined, viewer.token)).body.data.total >= 2, true);
  for (const res of [
    await put(table.id, { path: '/x', value: 1 }, viewer.token),
    await post(table.id, { path: '/rows', data: 2 }, viewer.token),
    await del(table.id, '/rows/0', '', viewer.token),
    await api('PUT', `/tables/${table.id}`, { name: 'mine' }, viewer.token),
    await api('DELETE', `/tables/${table.id}`, undefined, viewer.token),
    await api('POST', '/tables/', { project_id: projectId, name: 'viewer made' }, viewer.token),
  ]) t.is(res.status, 403, JSON.stringify(res.body));

  const outsider = await server.createUser('tables-outsider@example.com');
  for (const res of [
    await api('GET', `/tables/${table.id}`, undefined, outsider.token),
    await data(table.id, '', outsider.token),
    await put(table.id, { path: '/x', value: 1 }, outsider.token),
    await api('DELETE', `/tables/${table.id}`, undefined, outsider.token),
    await api('GET', `/tables/?project_id=${projectId}`, undefined, outsider.token),
    await api('GET', `/tables/?org_id=${orgId}`, undefined, outsider.token),
    await api('POST', '/tables/', { project_id: projectId, name: 'intruder' }, outsider.token),
  ]) t.is(res.status, 404, JSON.stringify(res.body));
  t.regex((await api('GET', `/tables/${table.id}`, undefined, outsider.token)).body.message, /Table not found/);

  const { key: docsKey } = await createKey(server, token, projectId, { scope_path: 'docs', mode: 'read_write', name: 'docs key' });
  t.is((await put(table.id, { path: '/by', value: 'key' }, docsKey)).status, 201, 'inside its scope a key writes');
  const versions = await versionsOf(table.node_id);
  t.is(versions[0]!.actor_type, 'agent', 'the key is the actor');
  for (const res of [
    await api('GET', `/tables/${other.id}`, undefined, docsKey),
    await data(other.id, '', docsKey),
    await post(other.id, { data: 1 }, docsKey),
    await api('POST', '/tables/', { project_id: projectId, name: 'outside', path: 'private/k.json' }, docsKey),
  ]) t.is(res.status, 403, JSON.stringify(res.body));
  const listed = (await api('GET', `/tables/?project_id=${projectId}`, undefined, docsKey)).body.data.tables.map((x: { id: string }) => x.id);
  t.true(listed.includes(table.id));
  t.false(listed.includes(other.id), 'a key lists only the tables in its scope');
  t.is((await api('POST', '/tables/', { project_id: projectId, name: 'inside', path: 'docs/k.json' }, docsKey)).status, 201);

  const { key: readKey } = await createKey(server, token, projectId, { mode: 'read', name: 'read key' });
  t.is((await data(other.id, '', readKey)).status, 200);
  t.is((await post(other.id, { data: 1 }, readKey)).status, 403);

  const elsewhere = await createProject(server, token, orgId, 'tables elsewhere');
  const { key: foreignKey } = await createKey(server, token, elsewhere, { name: 'foreign' });
  t.is((await data(table.id, '', foreignKey)).status, 404, "another project's key does not see the table");
});
