import test from 'ava';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropTemplate, ensureTemplate, freshPostgresDatabase, POSTGRES_ADMIN_URL } from '../helpers/postgresDatabases.ts';

/** test/helpers/postgresDatabases.ts: a database per test file, fresh or cloned from a template. */

const TABLES = 40;

/** Something the size of the metadata schema: 40 tables, each with an index and a row. */
async function schema(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const ddl = Array.from({ length: TABLES }, (_, i) => `CREATE TABLE t${i} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL, at text NOT NULL); CREATE INDEX t${i}_name ON t${i} (lower(name)); INSERT INTO t${i} (name, at) VALUES ('row', '2025-01-01');`);
    await c.query(ddl.join('\n'));
  } finally {
    await c.end();
  }
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, values)).rows;
  } finally {
    await c.end();
  }
}

const exists = async (name: string) => (await query(POSTGRES_ADMIN_URL, 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;
const tableCount = async (url: string) => Number((await query<{ n: string }>(url, "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'"))[0]!.n);
const templateName = () => `cns_tpl_${randomBytes(4).toString('hex')}`;

test('a fresh database is empty and its own; drop ends the connections still open and removes it', async (t) => {
  const [a, b] = await Promise.all([freshPostgresDatabase(), freshPostgresDatabase()]);
  t.not(a.name, b.name);
  t.regex(a.name, /^cns_t_[0-9a-f]{12}$/);
  t.is(await tableCount(a.url), 0);
  const left = new pg.Client({ connectionString: a.url });
  left.on('error', () => undefined); // the drop terminates it
  await left.connect();
  await a.drop();
  await b.drop();
  t.false(await exists(a.name));
  t.false(await exists(b.name));
  await t.notThrowsAsync(a.drop()); // twice is fine
  await t.throwsAsync(left.query('SELECT 1'));
});

test('ensureTemplate builds once when three processes race; every copy has the schema', async (t) => {
  const name = templateName();
  t.teardown(() => dropTemplate(name));
  let builds = 0;
  const setup = async (url: string) => {
    builds++;
    await schema(url);
  };
  t.deepEqual(await Promise.all([ensureTemplate(name, setup), ensureTemplate(name, setup), ensureTemplate(name, setup)]), [name, name, name]);
  t.is(builds, 1);
  t.deepEqual(await query(POSTGRES_ADMIN_URL, 'SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1', [name]), [{ datistemplate: true, datallowconn: false }]);
  const copy = await freshPostgresDatabase({ template: name });
  t.teardown(() => copy.drop());
  t.is(await tableCount(copy.url), TABLES);
  t.deepEqual(await query(copy.url, 'SELECT name FROM t39'), [{ name: 'row' }]);
});

test('a setup that fails leaves no template and no half-built database; the next call builds it', async (t) => {
  const name = templateName();
  t.teardown(() => dropTemplate(name));
  await t.throwsAsync(
    ensureTemplate(name, async (url) => {
      await query(url, 'CREATE TABLE half (id int)');
      throw new Error('migration 2 failed');
    }),
    { message: 'migration 2 failed' },
  );
  t.false(await exists(name));
  t.false(await exists(`${name}_build`));
  await ensureTemplate(name, schema);
  t.true(await exists(name));
});

test('CREATE DATABASE … TEMPLATE against a plain CREATE DATABASE (and one that then runs the schema), timed', async (t) => {
  const name = templateName();
  t.teardown(() => dropTemplate(name));
  await ensureTemplate(name, schema);
  const runs = 5;
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const drops: number[] = [];
  async function time(make: () => Promise<{ drop(): Promise<void>; url: string }>, then?: (url: string) => Promise<void>): Promise<number> {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const db = await make();
      await then?.(db.url);
      ms.push(performance.now() - started);
      t.is(await tableCount(db.url), then || make === cloned ? TABLES : 0);
      const dropping = performance.now();
      await db.drop();
      drops.push(performance.now() - dropping);
    }
    return median(ms);
  }
  const cloned = () => freshPostgresDatabase({ template: name });
  const plain = await time(() => freshPostgresDatabase());
  const clone = await time(cloned);
  const plainAndSchema = await time(() => freshPostgresDatabase(), schema);
  t.log(`median of ${runs}: plain CREATE DATABASE ${plain.toFixed(0)} ms; CREATE DATABASE … TEMPLATE (${TABLES} tables) ${clone.toFixed(0)} ms; plain CREATE then the schema ${plainAndSchema.toFixed(0)} ms; drop ${median(drops).toFixed(0)} ms`);
});
