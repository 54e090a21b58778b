import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { spawnServe } from '../helpers/cli.ts';
import { closedPort } from '../helpers/fakePostgres.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';

/**
 * `cns serve` with CNS_DATABASE_URL, as an operator runs it: a database it cannot use stops the
 * start with one line (no stack, no password) and a non-zero exit, before the data folder exists.
 */

/** The server trusts 127.0.0.1, so any password passes; this one must never be printed. */
const SECRET = 'pw-Hn4xQ9tVb2';
const migrated = migratedDatabases(test.after.always);
const withSecret = (url: string) => url.replace('postgres@', `postgres:${SECRET}@`);

/** Runs `cns serve` on a data folder that does not exist yet; answers its whole output and exit code. */
async function start(t: import('ava').ExecutionContext, url: string, workers = '1'): Promise<{ lines: string[]; code: number | null; created: boolean }> {
  const parent = mkdtempSync(join(tmpdir(), 'cns-pgstart-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dataDir = join(parent, 'data');
  const serve = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--workers', workers], { CNS_DATABASE_URL: url });
  t.teardown(() => serve.child.kill('SIGKILL'));
  const code = await serve.exited;
  const out = serve.output();
  t.false(out.includes(SECRET), out);
  return { lines: out.trim().split('\n'), code, created: existsSync(dataDir) };
}

test('nothing listening: one line naming host and port, exit 1, no data folder (one process and several workers)', async (t) => {
  const port = await closedPort();
  const line = `cns: cannot start: cannot reach PostgreSQL at 127.0.0.1:${port} (connection refused)`;
  t.deepEqual(await start(t, `postgres://postgres:${SECRET}@127.0.0.1:${port}/cns`), { lines: [line], code: 1, created: false });
  const workers = await start(t, `postgres://postgres:${SECRET}@127.0.0.1:${port}/cns`, '2');
  t.is(workers.code, 1);
  t.is(workers.lines.at(-1), line, workers.lines.join('\n'));
});

test('credentials refused, a missing database, an invalid URL: one line each', async (t) => {
  const d = await migrated();
  const role = await start(t, d.url.replace('postgres@', `cns_no_such_role:${SECRET}@`));
  t.deepEqual(role.lines, ['cns: cannot start: PostgreSQL refused the credentials of user cns_no_such_role (role "cns_no_such_role" does not exist)']);
  t.is(role.code, 1);
  const missing = await start(t, withSecret(d.url).replace(d.name, 'cns_no_such_db'));
  t.deepEqual(missing.lines, ['cns: cannot start: PostgreSQL has no database cns_no_such_db: create it with `createdb -h 127.0.0.1 -p 5432 -U postgres cns_no_such_db`']);
  t.is(missing.code, 1);
  const invalid = await start(t, `mysql://root:${SECRET}@127.0.0.1/cns`);
  t.deepEqual(invalid, { lines: ['cns: Invalid settings: CNS_DATABASE_URL must start with postgres:// or postgresql:// (got mysql://)'], code: 2, created: false });
});

test('a schema newer than the code is refused, and left as it was', async (t) => {
  const d = await migrated();
  const admin = new pg.Client({ connectionString: d.url });
  await admin.connect();
  t.teardown(() => admin.end());
  await admin.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from the future', '2030-01-01')");
  const { lines, code, created } = await start(t, withSecret(d.url));
  t.is(code, 1);
  t.false(created);
  t.is(lines.length, 1, lines.join('\n'));
  t.regex(lines[0]!, new RegExp(`^cns: cannot start: PostgreSQL database ${d.name} at 127\\.0\\.0\\.1:5432: the database was migrated by a newer cns \\(schema version 9999\\); this cns knows up to \\d+; `));
  t.is((await admin.query('SELECT max(version) AS v FROM schema_migrations')).rows[0].v, 9999);
});

test('several workers on PostgreSQL: each has its pool, the service serves and reports its engine', async (t) => {
  const d = await migrated();
  const parent = mkdtempSync(join(tmpdir(), 'cns-pgstart-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const serve = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', join(parent, 'data'), '--workers', '2'], { CNS_DATABASE_URL: withSecret(d.url), CNS_DATABASE_POOL: '6' });
  t.teardown(() => serve.child.kill('SIGKILL'));
  const [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
  const health = await fetch(`${url}/healthz`);
  t.is(health.status, 200);
  t.like(((await health.json()) as { data: unknown }).data, { status: 'ok', database: true, metadata_engine: 'postgres' });
  // Two workers' pools of 3 (CNS_DATABASE_POOL 6 shared out) and their listeners: never more than the budget plus one each.
  const admin = new pg.Client({ connectionString: d.url });
  await admin.connect();
  t.teardown(() => admin.end());
  const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'cns%'", [d.name]);
  t.true(rows[0]!.n >= 2 && rows[0]!.n <= 8, `${rows[0]!.n} connections`);
  serve.child.kill('SIGTERM');
  t.is(await serve.exited, 0);
  t.false(serve.output().includes(SECRET));
});
