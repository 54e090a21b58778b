import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CliUser } from '../cli/harness.ts';
import { defaultProject, contentApi } from '../helpers/project.ts';
import { freshPostgresDatabase, type TestDatabase } from '../helpers/postgresDatabases.ts';
import { startTestServer } from '../helpers/server.ts';

// `cns db copy` of a real install (issue 30): a server made records and stopped; its cns.db is
// copied into a fresh PostgreSQL database by the command line, and every table copied is compared
// row for row with its source.

let dataDir: string;
let projectId: string;
const user = new CliUser();
const databases: TestDatabase[] = [];

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cns-dbcopy-'));
  // SQLite, even when the suite runs on PostgreSQL (CNS_TEST_ENGINE=postgres): a blank URL pins it.
  const server = await startTestServer({ dataDir, urlFetchAllowPrivate: true }, { CNS_DATABASE_URL: '' });
  const { token } = await server.login();
  projectId = (await defaultProject(server, token)).projectId;
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'a.md', content: '# A\n', node_type: 'markdown' });
  // A hook to a port nothing listens on: its deliveries stay in the log, with their seq numbers.
  const hook = await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: 'http://127.0.0.1:9/hook', events: ['content.created'] } });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  for (const name of ['b.md', 'c.md']) await c('POST', '/write', { path: name, content: `# ${name}\n`, node_type: 'markdown' });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const d = await server.api('GET', `/projects/${projectId}/webhooks/${hook.body.data.id}/deliveries`, { token });
    if ((d.body.data.deliveries ?? d.body.data.items ?? []).length >= 2) break;
    if (Date.now() > deadline) throw new Error(`no deliveries logged: ${JSON.stringify(d.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await server.stop();
});

test.after.always(async () => {
  for (const d of databases) await d.drop();
  rmSync(dataDir, { recursive: true, force: true });
  user.dispose();
});

async function target(): Promise<{ db: TestDatabase; url: string; client: pg.Client }> {
  const db = await freshPostgresDatabase();
  databases.push(db);
  // A password in the URL (trust auth ignores it) shows that it is never printed.
  const url = new URL(db.url);
  url.password = 's3cret-pw';
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return { db, url: url.href, client };
}

test.serial('the records of a stopped install are copied, table by table, and verified', async (t) => {
  const { url, client } = await target();
  t.teardown(() => client.end());
  const r = await user.run(['db', 'copy', '--to', url, '--data-dir', dataDir]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /counts verified in PostgreSQL/);
  t.false(r.stdout.includes('s3cret-pw') || r.stderr.includes('s3cret-pw'), 'the password is never printed');
  t.regex(r.stdout, /postgres:\/\/postgres:\*\*\*\*@/);

  const sqlite = new Database(join(dataDir, 'cns.db'), { readonly: true });
  t.teardown(() => sqlite.close());
  const copied = [...r.stdout.matchAll(/^ {2}(\w+) +(\d+) rows$/gm)].map((m) => ({ table: m[1]!, rows: Number(m[2]) }));
  t.true(copied.length >= 10, r.stdout);
  const order = copied.map((c) => c.table);
  t.true(order.indexOf('users') < order.indexOf('organizations') && order.indexOf('projects') < order.indexOf('webhooks') && order.indexOf('webhooks') < order.indexOf('webhook_deliveries'), 'parents before children');
  for (const { table, rows } of copied) {
    const source = sqlite.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
    t.is(rows, source.length, `${table}: the count printed is the source's`);
    const { rows: copiedRows } = await client.query(`SELECT * FROM ${table}`);
    const key = (row: Record<string, unknown>) => JSON.stringify(Object.keys(row).sort().map((k) => [k, row[k] instanceof Buffer ? (row[k] as Buffer).toString('hex') : row[k] === null ? null : String(row[k])]));
    t.deepEqual(copiedRows.map(key).sort(), source.map(key).sort(), `${table}: the same rows`);
  }
  t.true(copied.find((c) => c.table === 'webhook_deliveries')!.rows >= 2, 'deliveries were copied');
  const { rows: users } = await client.query('SELECT email FROM users');
  t.true(users.length >= 1);
  // The identity continues after the copied numbers.
  const { rows: seq } = await client.query<{ next: string; max: string }>("SELECT nextval(pg_get_serial_sequence('webhook_deliveries', 'seq')) AS next, (SELECT max(seq) FROM webhook_deliveries) AS max");
  t.true(Number(seq[0]!.next) > Number(seq[0]!.max));
  t.regex(r.stdout, /stay in .*cns\.db: .*\bnodes\b/, 'the content index stays beside the repositories');
  t.true(projectId.length > 0);
});

test.serial('a database that already holds records is refused, and keeps them', async (t) => {
  const { url, client } = await target();
  t.teardown(() => client.end());
  t.is((await user.run(['db', 'copy', '--to', url, '--data-dir', dataDir])).code, 0);
  const before = (await client.query<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries')).rows[0]!.n;
  const again = await user.run(['db', 'copy', '--to', url, '--data-dir', dataDir]);
  t.not(again.code, 0);
  t.regex(again.stderr, /already holds records \(table \w+\): cns db copy fills only an empty database/);
  t.is((await client.query<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries')).rows[0]!.n, before);
});

test.serial('a wrong address or an unreachable server is one line, without the password; no URL is a usage error', async (t) => {
  const unreachable = await user.run(['db', 'copy', '--to', 'postgres://postgres:s3cret-pw@127.0.0.1:1/x', '--data-dir', dataDir]);
  t.not(unreachable.code, 0);
  t.regex(unreachable.stderr, /cannot reach PostgreSQL at 127\.0\.0\.1:1/);
  t.false(unreachable.stderr.includes('s3cret-pw'));
  const wrong = await user.run(['db', 'copy', '--to', 'mysql://u:s3cret-pw@h/db', '--data-dir', dataDir]);
  t.not(wrong.code, 0);
  t.regex(wrong.stderr, /must start with postgres:\/\/ or postgresql:\/\//);
  t.false(wrong.stderr.includes('s3cret-pw'));
  const none = await user.run(['db', 'copy', '--data-dir', dataDir]);
  t.is(none.code, 2);
  t.regex(none.stderr, /needs --to postgres:\/\//);
});
