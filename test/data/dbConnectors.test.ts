import test from 'ava';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../src/app/server.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { engineFor, type ConnectionSpec } from '../../src/data/dbConnectors/engines.ts';
import { SessionFailure } from '../../src/data/dbConnectors/errors.ts';
import { checkReadOnlyStatement } from '../../src/data/dbConnectors/statementCheck.ts';
import { databaseAddressRefusal } from '../../src/net/outboundGuard.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

// Database connectors against the real PostgreSQL and MariaDB of this machine and a real SQLite
// file, through a real server. Each test makes its own uniquely named tables and drops them.

const ADMIN = { email: 'db-admin@example.com', password: 'admin-password-1' };
const PG = { host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' };
const MY = { host: '127.0.0.1', port: 3306, database: 'test', user: 'root' };
/** pg on this machine trusts 127.0.0.1 (any password passes), so this one travels and must never be shown. */
const SECRET = `pw-${randomBytes(9).toString('hex')}`;
// Long enough for the 15 MB result of the bounded-result test on a loaded machine (it took over 1.5 s at a load of 20).
const TIMEOUT_MS = 4000;

let running: RunningServer;
let dataDir: string;
let sqliteDir: string;
const logLines: string[] = [];
/** Every answer body this file received, to look for the password in. */
const answers: string[] = [];
let token: string;
let projectId: string;

async function api(method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${running.url}/api/v1${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  answers.push(text);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* bytes */
  }
  return { status: res.status, headers: res.headers, body };
}

async function login(email: string, password: string): Promise<string> {
  return (await api('POST', '/auth/login', { body: { email, password } })).body.data.access_token;
}

async function userToken(email: string): Promise<{ token: string; id: string }> {
  const u = await running.services.users.create({ email, password: 'user-password-1' });
  return { token: await login(email, 'user-password-1'), id: u.id };
}

const unique = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;
const C = '/db-connector/connections';

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cns-dbc-'));
  sqliteDir = mkdtempSync(join(tmpdir(), 'cns-dbc-sqlite-'));
  const capture = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const settings = loadSettings(
    {
      CNS_ADMIN_EMAIL: ADMIN.email,
      CNS_ADMIN_PASSWORD: ADMIN.password,
      CNS_RATE_LIMIT_MAX: '0',
      CNS_LOGIN_RATE_LIMIT_MAX: '0',
      CNS_DB_ALLOW_LOOPBACK: 'true',
      CNS_DB_SQLITE_DIR: sqliteDir,
      CNS_DB_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS),
    },
    { host: '127.0.0.1', port: 0, dataDir },
  );
  running = await startServer(settings, pino({ level: 'trace' }, capture));
  token = await login(ADMIN.email, ADMIN.password);
  projectId = (await api('POST', '/auth/initialize', { token })).body.data.project.id;
});

test.after.always(async () => {
  await running?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(sqliteDir, { recursive: true, force: true });
});

/** A PostgreSQL table of this test, dropped when the test ends. */
async function pgTable(t: import('ava').ExecutionContext, ddl: string, inserts: string): Promise<string> {
  const name = unique('cns_dbc');
  const c = new pg.Client(PG);
  await c.connect();
  await c.query(`CREATE TABLE ${name} (${ddl})`);
  await c.query(`INSERT INTO ${name} ${inserts}`);
  await c.query(`ANALYZE ${name}`);
  t.teardown(async () => {
    await c.query(`DROP TABLE IF EXISTS ${name}`);
    await c.end();
  });
  return name;
}

async function pgCount(name: string): Promise<number> {
  const c = new pg.Client(PG);
  await c.connect();
  try {
    return Number((await c.query(`SELECT count(*) AS n FROM ${name}`)).rows[0].n);
  } finally {
    await c.end();
  }
}

async function myTable(t: import('ava').ExecutionContext, ddl: string, inserts: string): Promise<string> {
  const name = unique('cns_dbc');
  const c = await mysql.createConnection({ ...MY, password: '' });
  await c.query(`CREATE TABLE ${name} (${ddl})`);
  await c.query(`INSERT INTO ${name} ${inserts}`);
  t.teardown(async () => {
    await c.query(`DROP TABLE IF EXISTS ${name}`);
    await c.end();
  });
  return name;
}

async function createConnection(body: Record<string, unknown>, as = token): Promise<ApiResponse> {
  return api('POST', `${C}/`, { token: as, body: { project_id: projectId, name: unique('conn'), ...body } });
}

async function pgConnection(as = token): Promise<string> {
  const r = await createConnection({ engine: 'postgres', ...PG, password: SECRET }, as);
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.data.id;
}

async function myConnection(): Promise<string> {
  const r = await createConnection({ engine: 'mysql', ...MY });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.data.id;
}

async function accessKey(options: { mode: 'read' | 'read_write'; scope_path?: string }): Promise<{ key: string; id: string }> {
  const r = await api('POST', '/connections/', { token, body: { project_id: projectId, name: unique('key'), kind: 'api', ...options } });
  return { key: r.body.data.key, id: r.body.data.connection.id };
}

const raw = async (path: string) => (await running.services.content.readContent(projectId, { path })).bytes.toString('utf8');

test('postgres: created after a test; tables with estimates and columns; preview typed; save as json, csv and markdown as the caller', async (t) => {
  const table = await pgTable(
    t,
    'id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), at timestamptz, doc jsonb, big int8',
    `SELECT g, 'item ' || g || CASE WHEN g = 2 THEN ', "quoted" | piped' ELSE '' END, g * 1.5, '2024-01-02T03:04:05Z', jsonb_build_object('g', g), 9007199254740993 FROM generate_series(1, 30) g`,
  );
  const created = await createConnection({ engine: 'postgres', ...PG, password: SECRET });
  t.is(created.status, 201, JSON.stringify(created.body));
  assertDocumented(t, running.services, 'post', C, created);
  const conn = created.body.data;
  t.like(conn, { engine: 'postgres', host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres', has_password: true, ssl: 'disable', file: null });
  t.false('password' in conn);

  const list = await api('GET', `${C}/?project_id=${projectId}`, { token });
  assertDocumented(t, running.services, 'get', C, list);
  t.true(list.body.data.connections.some((c: { id: string }) => c.id === conn.id));
  const alias = await api('GET', `/db-connector/access/${conn.id}`, { token });
  t.is(alias.status, 200, 'the /db-connector/access alias answers the same');
  t.is(alias.body.data.name, conn.name);

  const tables = await api('GET', `${C}/${conn.id}/tables`, { token });
  assertDocumented(t, running.services, 'get', `${C}/{id}/tables`, tables);
  const listed = tables.body.data.tables.find((x: { name: string }) => x.name === table);
  t.like(listed, { schema: 'public', qualified_name: `public.${table}`, type: 'table', row_estimate: 30, row_count_exact: false });
  t.deepEqual(
    listed.columns.map((c: { name: string; type: string; nullable: boolean }) => [c.name, c.type, c.nullable]),
    [['id', 'integer', false], ['name', 'text', false], ['price', 'numeric(10,2)', true], ['at', 'timestamp with time zone', true], ['doc', 'jsonb', true], ['big', 'bigint', true]],
  );

  const started = Date.now();
  const preview = await api('GET', `${C}/${conn.id}/tables/${encodeURIComponent(`public.${table}`)}/preview?limit=2`, { token });
  t.is(preview.status, 200, JSON.stringify(preview.body));
  assertDocumented(t, running.services, 'get', `${C}/{id}/tables/{table}/preview`, preview);
  // Far from any real bound: a busy machine must not fail it; a preview that scanned or hung would.
  t.true(Date.now() - started < 10_000);
  t.like(preview.body.data, { table: `public.${table}`, row_count: 2, truncated: true });
  t.deepEqual(preview.body.data.rows[0], { id: 1, name: 'item 1', price: '1.50', at: '2024-01-02 03:04:05+00', doc: { g: 1 }, big: '9007199254740993' });
  t.is(preview.body.data.columns[2].type, 'numeric(10,2)');
  // A bare name found in one schema is that table.
  t.is((await api('GET', `${C}/${conn.id}/tables/${table}/preview?limit=1`, { token })).body.data.rows[0].id, 1);

  const save = (body: Record<string, unknown>) => api('POST', `${C}/${conn.id}/save`, { token, body });
  const json = await save({ table, path: `exports/${table}.json`, format: 'json', limit: 3 });
  t.is(json.status, 201, JSON.stringify(json.body));
  assertDocumented(t, running.services, 'post', `${C}/{id}/save`, json);
  t.like(json.body.data, { path: `exports/${table}.json`, version: 1, rows: 3, truncated: true, format: 'json' });
  const node = running.services.content.getByPath(projectId, `exports/${table}.json`);
  t.is(node.type, 'json');
  t.is(node.id, json.body.data.node_id);
  const content = JSON.parse(await raw(`exports/${table}.json`));
  t.deepEqual(content.map((r: { id: number }) => r.id), [1, 2, 3]);
  t.is(content[1].name, 'item 2, "quoted" | piped');
  t.is(Buffer.byteLength(await raw(`exports/${table}.json`)), json.body.data.bytes, 'the size counted while streaming is the stored size');
  const [version] = running.services.content.listVersions(projectId, { path: `exports/${table}.json` }).versions;
  t.like(version, { actorType: 'user', author: ADMIN.email, version: 1 });

  const csv = await save({ query: `SELECT id, name, price FROM ${table} WHERE id <= 2 ORDER BY id`, path: `exports/${table}.csv`, format: 'csv' });
  t.is(csv.status, 201, JSON.stringify(csv.body));
  t.like(csv.body.data, { rows: 2, truncated: false, format: 'csv' });
  t.is(await raw(`exports/${table}.csv`), 'id,name,price\r\n1,item 1,1.50\r\n2,"item 2, ""quoted"" | piped",3.00\r\n');
  t.is(running.services.content.getByPath(projectId, `exports/${table}.csv`).mimeType, 'text/csv');

  const md = await save({ query: `SELECT id, name FROM ${table} WHERE id IN (1, 2) ORDER BY id`, path: `exports/${table}.md`, format: 'markdown' });
  t.is(md.status, 201);
  t.is(await raw(`exports/${table}.md`), '| id | name |\n| --- | --- |\n| 1 | item 1 |\n| 2 | item 2, "quoted" \\| piped |\n');
  t.is(running.services.content.getByPath(projectId, `exports/${table}.md`).type, 'markdown');

  // Saving again to the same path is a new version of the same node (200).
  const again = await save({ query: `SELECT id FROM ${table} ORDER BY id LIMIT 1`, path: `exports/${table}.json`, format: 'json' });
  t.is(again.status, 200);
  t.like(again.body.data, { node_id: node.id, version: 2, rows: 1 });

  const deleted = await api('DELETE', `${C}/${conn.id}`, { token });
  assertDocumented(t, running.services, 'delete', `${C}/{id}`, deleted);
  t.is((await api('GET', `${C}/${conn.id}/tables`, { token })).status, 404);
});

test('mysql (MariaDB): tables with columns, preview, save as csv; a wrong password is 422 and nothing is saved', async (t) => {
  const table = await myTable(t, 'id INT PRIMARY KEY, label VARCHAR(20), amount DECIMAL(8,2), made DATETIME', "VALUES (1, 'one', 1.25, '2024-05-06 07:08:09'), (2, NULL, 2.5, NULL), (3, 'three', 3, NULL)");
  const id = await myConnection();
  const tables = await api('GET', `${C}/${id}/tables`, { token });
  t.is(tables.status, 200, JSON.stringify(tables.body));
  const listed = tables.body.data.tables.find((x: { name: string }) => x.name === table);
  t.like(listed, { schema: 'test', qualified_name: table, type: 'table' });
  t.deepEqual(listed.columns.map((c: { name: string; type: string }) => `${c.name} ${c.type}`), ['id int(11)', 'label varchar(20)', 'amount decimal(8,2)', 'made datetime']);
  t.is(typeof listed.row_estimate, 'number');

  const preview = await api('GET', `${C}/${id}/tables/${table}/preview?limit=2`, { token });
  t.is(preview.status, 200, JSON.stringify(preview.body));
  t.deepEqual(preview.body.data.rows, [
    { id: 1, label: 'one', amount: '1.25', made: '2024-05-06 07:08:09' },
    { id: 2, label: null, amount: '2.50', made: null },
  ]);
  t.true(preview.body.data.truncated);

  const csv = await api('POST', `${C}/${id}/save`, { token, body: { table, path: `my/${table}.csv`, format: 'csv' } });
  t.is(csv.status, 201, JSON.stringify(csv.body));
  t.is(await raw(`my/${table}.csv`), 'id,label,amount,made\r\n1,one,1.25,2024-05-06 07:08:09\r\n2,,2.50,\r\n3,three,3.00,\r\n');

  const name = unique('wrong');
  const started = Date.now();
  const wrong = await api('POST', `${C}/`, { token, body: { project_id: projectId, name, engine: 'mysql', ...MY, password: SECRET } });
  t.is(wrong.status, 422);
  t.is(wrong.body.error.details[0].field, 'password');
  t.regex(wrong.body.message, /tested before saving and failed: .*Access denied for user 'root'/);
  t.true(Date.now() - started < 5000);
  const all = await api('GET', `${C}/?project_id=${projectId}&limit=200`, { token });
  t.false(all.body.data.connections.some((c: { name: string }) => c.name === name), 'a failed test saves nothing');
});

test('sqlite: files only from CNS_DB_SQLITE_DIR; tables with exact counts, preview, save as markdown; escapes refused', async (t) => {
  const file = `${unique('s')}.db`;
  const db = new Database(join(sqliteDir, file));
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, data BLOB); INSERT INTO notes VALUES (1, 'a|b', x'00ff'), (2, 'line\nbreak', NULL); CREATE VIEW bodies AS SELECT body FROM notes;");
  db.close();
  const created = await createConnection({ engine: 'sqlite', file });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.like(created.body.data, { engine: 'sqlite', file, host: null, port: null, has_password: false });
  const id = created.body.data.id;

  const tables = await api('GET', `${C}/${id}/tables`, { token });
  t.deepEqual(
    tables.body.data.tables.map((x: { name: string; type: string; row_estimate: number | null; row_count_exact: boolean }) => [x.name, x.type, x.row_estimate, x.row_count_exact]),
    [['bodies', 'view', null, false], ['notes', 'table', 2, true]],
  );
  const preview = await api('GET', `${C}/${id}/tables/notes/preview`, { token });
  t.deepEqual(preview.body.data.rows, [{ id: 1, body: 'a|b', data: 'AP8=' }, { id: 2, body: 'line\nbreak', data: null }]);
  t.false(preview.body.data.truncated);

  const md = await api('POST', `${C}/${id}/save`, { token, body: { table: 'notes', path: `lite/${file}.md`, format: 'markdown' } });
  t.is(md.status, 201, JSON.stringify(md.body));
  t.is(await raw(`lite/${file}.md`), '| id | body | data |\n| --- | --- | --- |\n| 1 | a\\|b | AP8= |\n| 2 | line<br>break |  |\n');
  const write = await api('POST', `${C}/${id}/save`, { token, body: { query: 'WITH x AS (SELECT 1) DELETE FROM notes', path: 'lite/nope.json' } });
  t.is(write.status, 422);
  t.regex(write.body.message, /read-only/);

  const outside = mkdtempSync(join(tmpdir(), 'cns-dbc-outside-'));
  t.teardown(() => rmSync(outside, { recursive: true, force: true }));
  new Database(join(outside, 'secret.db')).close();
  symlinkSync(join(outside, 'secret.db'), join(sqliteDir, `${file}-link.db`));
  mkdirSync(join(sqliteDir, `${file}-dir`));
  writeFileSync(join(sqliteDir, `${file}-not-a-db.db`), 'hello, not a database at all, not even close to one: '.repeat(20));
  const refused: [string, RegExp][] = [
    ['../outside.db', /may not contain `\.\.`/],
    [join(outside, 'secret.db'), /not an absolute path/],
    [`${file}-link.db`, /leads outside the SQLite folder/],
    [`${file}-dir`, /is not a file/],
    ['missing.db', /No file "missing\.db"/],
    [`${file}-not-a-db.db`, /could not open the file|file is not a database/],
  ];
  for (const [f, message] of refused) {
    const r = await createConnection({ engine: 'sqlite', file: f });
    t.is(r.status, 422, f);
    t.is(r.body.error.details[0].field, 'file', f);
    t.regex(r.body.message, message, f);
  }
  const extra = await createConnection({ engine: 'sqlite', file, host: 'example.com' });
  t.is(extra.status, 422, 'a field that does not apply is refused, not ignored');
  t.is(extra.body.error.details[0].field, 'host');
});

test('writes through query are refused: INSERT, a second statement, a data-modifying CTE, SELECT INTO, INTO OUTFILE', async (t) => {
  const table = await pgTable(t, 'id int', 'SELECT generate_series(1, 3)');
  const id = await pgConnection();
  const attempt = (query: string, conn = id) => api('POST', `${C}/${conn}/save`, { token, body: { query, path: `w/${unique('x')}.json` } });
  const cases: [string, RegExp][] = [
    [`INSERT INTO ${table} VALUES (4)`, /starts with INSERT/],
    [`SELECT 1; DROP TABLE ${table}`, /Only one statement/],
    [`SELECT 1 /* ; */; DELETE FROM ${table}`, /Only one statement/],
    [`WITH d AS (DELETE FROM ${table} RETURNING *) SELECT * FROM d`, /read-only/],
    [`SELECT * INTO ${table}_copy FROM ${table}`, /SELECT … INTO is not accepted/],
    [`SELECT * FROM ${table} FOR UPDATE`, /Locking reads/],
  ];
  for (const [query, message] of cases) {
    const r = await attempt(query);
    t.is(r.status, 422, query);
    t.is(r.body.error.details[0].field, 'query', query);
    t.regex(r.body.message, message, query);
  }
  t.is(await pgCount(table), 3, 'the table is unchanged');
  const my = await myConnection();
  const outfile = join(tmpdir(), `${unique('outfile')}.txt`);
  const into = await attempt(`SELECT 1 INTO OUTFILE '${outfile}'`, my);
  t.is(into.status, 422);
  t.regex(into.body.message, /INTO is not accepted/);
  const hidden = await attempt('SELECT 1 /*! INTO OUTFILE "/tmp/x" */', my);
  t.regex(hidden.body.message, /executable comments/);
  t.is(running.services.content.findByPath(projectId, 'w'), null, 'no node was written');
});

test('a slow query is stopped by the statement timeout with a clear error (PostgreSQL and MariaDB)', async (t) => {
  for (const [id, query] of [[await pgConnection(), 'SELECT pg_sleep(20)'], [await myConnection(), 'SELECT SLEEP(20)']] as const) {
    const started = Date.now();
    const r = await api('POST', `${C}/${id}/save`, { token, body: { query, path: `slow/${unique('s')}.json` } });
    const took = Date.now() - started;
    t.is(r.status, 422, JSON.stringify(r.body));
    t.regex(r.body.message, new RegExp(`longer than the statement timeout \\(${TIMEOUT_MS} ms, CNS_DB_STATEMENT_TIMEOUT_MS\\)`));
    // Bounded by the query's own 20 s, not by the timeout plus a margin a busy machine could eat.
    t.true(took >= TIMEOUT_MS - 100 && took < 15_000, `${query} took ${took} ms`);
  }
});

test('creation fails fast and clearly: unknown role or database, closed port, unreachable address; link-local and metadata refused', async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ ...PG, user: 'no_such_role_cns' }, 'user', /role "no_such_role_cns" does not exist/],
    [{ ...PG, database: 'no_such_db_cns' }, 'database', /database "no_such_db_cns" does not exist/],
    [{ ...PG, port: closedPort }, 'host', /could not be reached: .*ECONNREFUSED/],
    [{ ...PG, host: '192.0.2.1' }, 'host', /could not be reached/],
    [{ ...PG, host: '169.254.169.254' }, 'host', /link-local, metadata/],
    [{ ...PG, host: '[::ffff:169.254.169.254]' }, 'host', /link-local, metadata/],
    [{ ...PG, host: '0.0.0.0' }, 'host', /unspecified/],
    [{ ...PG, host: '100.100.100.200' }, 'host', /metadata/],
  ];
  for (const [fields, field, message] of cases) {
    const started = Date.now();
    const r = await createConnection({ engine: 'postgres', ...fields });
    t.is(r.status, 422, JSON.stringify(fields));
    t.is(r.body.error.details[0].field, field, JSON.stringify(fields));
    t.regex(r.body.message, message);
    // The unreachable address takes the whole 5 s connect timeout; the bound is far below the
    // system's own TCP timeout (minutes), which is what a missing connect timeout would wait.
    t.true(Date.now() - started < 30_000, `${JSON.stringify(fields)} answered within the connect timeout`);
  }
  const missing = await createConnection({ engine: 'mysql', host: '127.0.0.1' });
  t.is(missing.status, 422);
  t.is(missing.body.error.details[0].field, 'database');
});

test('a server that never answers fails at the connect timeout (engines directly, with a short one)', async (t) => {
  const silent: Server = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    silent.close();
  });
  const port = (silent.address() as AddressInfo).port;
  const settings = { allowLoopback: true, sqliteDir: null, statementTimeoutMs: 5000, maxRows: 10 };
  for (const engine of ['postgres', 'mysql'] as const) {
    const spec: ConnectionSpec = { engine, host: '127.0.0.1', port, database: 'x', user: 'x', password: null, ssl: 'disable', file: null };
    const started = Date.now();
    const e = await t.throwsAsync(engineFor(spec, settings, 300).test());
    t.true(e instanceof SessionFailure, String(e));
    t.is((e as SessionFailure).kind, 'network');
    t.regex(e!.message, /no answer within 0\.3 s/);
    // A server that never answers would hang without the 0.3 s connect timeout.
    t.true(Date.now() - started < 10_000, engine);
  }
});

test('loopback is refused unless allowed, and SQLite is refused while CNS_DB_SQLITE_DIR is unset', async (t) => {
  const plain: TestServer = await startTestServer();
  t.teardown(() => plain.stop());
  const { token: admin } = await plain.login();
  const { projectId: pid } = await defaultProject(plain, admin);
  for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
    const r = await plain.api('POST', `${C}/`, { token: admin, body: { project_id: pid, name: unique('lo'), engine: 'postgres', ...PG, host } });
    t.is(r.status, 422, host);
    t.is(r.body.error.details[0].field, 'host');
    t.regex(r.body.message, /loopback.*CNS_DB_ALLOW_LOOPBACK=true/, host);
  }
  const lite = await plain.api('POST', `${C}/`, { token: admin, body: { project_id: pid, name: 'lite', engine: 'sqlite', file: 'a.db' } });
  t.is(lite.status, 422);
  t.is(lite.body.error.details[0].field, 'engine');
  t.regex(lite.body.message, /CNS_DB_SQLITE_DIR/);
});

test('the result is bounded: a row cap truncates, a limit above CNS_DB_MAX_ROWS is 422, content above the largest node is 413 naming what fits', async (t) => {
  const id = await pgConnection();
  const capped = await api('POST', `${C}/${id}/save`, { token, body: { query: 'SELECT g FROM generate_series(1, 1000) g', path: `cap/${unique('c')}.json`, limit: 5 } });
  t.like(capped.body.data, { rows: 5, truncated: true });
  const over = await api('POST', `${C}/${id}/save`, { token, body: { query: 'SELECT 1', path: 'cap/x.json', limit: 100_001 } });
  t.is(over.status, 422);
  t.is(over.body.error.details[0].field, 'limit');
  const path = `cap/${unique('big')}.csv`;
  const big = await api('POST', `${C}/${id}/save`, { token, body: { query: "SELECT g, repeat('x', 300) AS pad FROM generate_series(1, 50000) g", path, format: 'csv' } });
  t.is(big.status, 413, JSON.stringify(big.body));
  t.regex(big.body.message, /larger than 10 MiB.*CNS_MAX_CONTENT_BYTES.*: \d+ rows fit\. Save fewer rows \(limit: \d+ or less\)/);
  t.is(running.services.content.findByPath(projectId, path), null);
  const both = await api('POST', `${C}/${id}/save`, { token, body: { table: 'a', query: 'SELECT 1', path: 'cap/y.json' } });
  t.is(both.status, 422);
});

test('authorization: a viewer reads but cannot create or save; an outsider gets 404; keys by mode and scope', async (t) => {
  const id = await pgConnection();
  const viewer = await userToken(`${unique('viewer')}@example.com`);
  t.is((await api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } })).status, 201);
  t.is((await createConnection({ engine: 'postgres', ...PG }, viewer.token)).status, 403);
  t.is((await api('DELETE', `${C}/${id}`, { token: viewer.token })).status, 403);
  t.is((await api('GET', `${C}/${id}/tables`, { token: viewer.token })).status, 200);
  t.is((await api('POST', `${C}/${id}/save`, { token: viewer.token, body: { query: 'SELECT 1 AS one', path: 'v/one.json' } })).status, 403);

  const outsider = await userToken(`${unique('outsider')}@example.com`);
  t.is((await api('GET', `${C}/?project_id=${projectId}`, { token: outsider.token })).status, 404);
  for (const [method, path, body] of [['GET', `${C}/${id}`], ['GET', `${C}/${id}/tables`], ['GET', `${C}/${id}/tables/x/preview`], ['DELETE', `${C}/${id}`], ['POST', `${C}/${id}/save`, { query: 'SELECT 1', path: 'o.json' }]] as const) {
    const r = await api(method, path, { token: outsider.token, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.message, 'Database connection not found.');
  }

  const readKey = await accessKey({ mode: 'read' });
  t.is((await api('GET', `${C}/${id}/tables`, { token: readKey.key })).status, 200);
  t.is((await api('POST', `${C}/${id}/save`, { token: readKey.key, body: { query: 'SELECT 1 AS one', path: 'k/one.json' } })).status, 403);
  const scoped = await accessKey({ mode: 'read_write', scope_path: 'keyed' });
  const inside = await api('POST', `${C}/${id}/save`, { token: scoped.key, body: { query: 'SELECT 1 AS one', path: 'keyed/one.json' } });
  t.is(inside.status, 201, JSON.stringify(inside.body));
  t.like(running.services.content.listVersions(projectId, { path: 'keyed/one.json' }).versions[0], { actorType: 'agent', actorId: scoped.id });
  const beside = await api('POST', `${C}/${id}/save`, { token: scoped.key, body: { query: 'SELECT 1 AS one', path: 'elsewhere/one.json' } });
  t.is(beside.status, 403);
  t.regex(beside.body.message, /limited to "keyed"/);
});

test('the password is stored sealed and never appears in an answer or a log line', async (t) => {
  const id = await pgConnection();
  await api('GET', `${C}/${id}/tables`, { token });
  await api('POST', `${C}/${id}/save`, { token, body: { query: 'SELECT nosuchcolumn', path: 'pw/x.json' } });
  await api('POST', `${C}/`, { token, body: { project_id: projectId, name: unique('pw'), engine: 'mysql', ...MY, password: SECRET } });
  const row = await running.services.metadata.db.selectFrom('db_connections').select('password_encrypted').where('id', '=', id).executeTakeFirstOrThrow();
  t.regex(row.password_encrypted!, /^v1\./);
  t.false(row.password_encrypted!.includes(SECRET));
  t.true(logLines.length > 0, 'the server logged (trace level)');
  t.false(logLines.some((l) => l.includes(SECRET)), 'no log line carries the password');
  t.false(answers.some((a) => a.includes(SECRET)), 'no answer carries the password');
});

test('the statement check: one SELECT/WITH, strings and comments skipped per dialect', (t) => {
  const ok = (sql: string, dialect: 'postgres' | 'mysql' | 'sqlite' = 'postgres') => checkReadOnlyStatement(sql, dialect);
  const no = (sql: string, dialect: 'postgres' | 'mysql' | 'sqlite' = 'postgres') => t.throws(() => checkReadOnlyStatement(sql, dialect), undefined, sql);
  t.is(ok("SELECT ';' AS a; -- done\n;"), "SELECT ';' AS a");
  t.is(ok('(SELECT 1) UNION (SELECT 2)'), '(SELECT 1) UNION (SELECT 2)');
  ok('WITH x AS (SELECT 1) SELECT * FROM x');
  ok("SELECT $$ ; DROP $$, $tag$ ; $tag$, E'it\\'s ; fine', 'it''s'");
  ok('SELECT 1 /* nested /* ; */ still comment ; */');
  ok('SELECT "into" FROM t');
  ok("SELECT 'a\\'; DROP TABLE x; --' AS s", 'mysql');
  ok('SELECT `weird;name` FROM t', 'mysql');
  ok('SELECT [a;b] FROM t', 'sqlite');
  no("SELECT 'a\\'; DROP TABLE x; --'");
  no('SELECT 1--1; DROP TABLE x', 'mysql');
  no('SELECT 1 # ;\n; DROP TABLE x', 'mysql');
  no('EXPLAIN ANALYZE SELECT 1');
  no('select 1 into outfile "/tmp/x"', 'mysql');
  no('SELECT 1 LOCK IN SHARE MODE', 'mysql');
  no('');
  no("SELECT 'unterminated");
  no('SELECT $a$ never closed');
});

test('the database host rule: private networks pass, loopback only when allowed, link-local and metadata never', (t) => {
  for (const a of ['10.1.2.3', '192.168.0.10', '172.16.5.4', 'fd12::1', '8.8.8.8']) t.is(databaseAddressRefusal(a, false), null, a);
  for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
    t.is(databaseAddressRefusal(a, false), 'a loopback address', a);
    t.is(databaseAddressRefusal(a, true), null, a);
  }
  for (const a of ['169.254.169.254', '::ffff:a9fe:a9fe', 'fe80::1', '100.100.100.200', 'fd00:ec2::254', '0.0.0.0', '::', '224.0.0.1', '255.255.255.255']) {
    t.truthy(databaseAddressRefusal(a, true), a);
  }
});
