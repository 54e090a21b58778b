import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A PostgreSQL database of its own for each test file: created fresh (or cloned from a prepared
 * template), dropped after. The server is the machine's (CNS_TEST_POSTGRES_URL, a superuser).
 */
export const POSTGRES_ADMIN_URL = process.env.CNS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  /** Ends every connection still open to it and drops it; safe to call twice. */
  drop(): Promise<void>;
}

/** Names are generated or checked, so they can be spliced into statements as quoted identifiers. */
const NAME = /^[a-z_][a-z0-9_]{0,62}$/;
export const quotedName = (name: string) => {
  if (!NAME.test(name)) throw new Error(`not a database name for tests: ${name}`);
  return `"${name}"`;
};

/** The admin URL with another database as its path. */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.href;
}

/** Runs `use` on a connection of its own to the admin database (no pool left behind to hold a test process open). */
async function withAdmin<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, application_name: 'cns-test-admin' });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** WITH (FORCE) ends the sessions still connected (a pool a failed test did not close); a template must first stop being one. */
async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  const { rows } = await client.query<{ datistemplate: boolean }>('SELECT datistemplate FROM pg_database WHERE datname = $1', [name]);
  if (rows.length === 0) return;
  if (rows[0]!.datistemplate) await client.query(`ALTER DATABASE ${quotedName(name)} WITH IS_TEMPLATE false`);
  await client.query(`DROP DATABASE IF EXISTS ${quotedName(name)} WITH (FORCE)`);
}

/** Creates `cns_t_<random>`, empty or as a copy of `template` (made by ensureTemplate). */
export async function freshPostgresDatabase(options: { template?: string } = {}): Promise<TestDatabase> {
  const name = `cns_t_${randomBytes(6).toString('hex')}`;
  const from = options.template === undefined ? '' : ` TEMPLATE ${quotedName(options.template)}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${quotedName(name)}${from}`));
  return { name, url: databaseUrl(name), drop: () => withAdmin((c) => dropDatabase(c, name)) };
}

/**
 * Makes the template database `name` once, by `setup(url)` (migrations, seed rows), and answers
 * its name. Test processes that race take a session advisory lock in turn; the one that builds
 * does so under a temporary name and renames last, so a template under `name` is always whole
 * and a build a crashed process left behind is dropped by the next. `setup` must close its
 * connections: a database with sessions cannot be renamed or copied. Put a version of the
 * schema in `name` (a hash of the migrations) so that a changed schema makes a new template.
 */
export async function ensureTemplate(name: string, setup: (url: string) => Promise<void>): Promise<string> {
  quotedName(name);
  const building = `${name.slice(0, 50)}_build`;
  return withAdmin(async (c) => {
    // One lock per template name, for the session: released by the unlock below or when the connection ends.
    await c.query('SELECT pg_advisory_lock(hashtext($1))', [`cns-test-template:${name}`]);
    try {
      const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rowCount) return name;
      await dropDatabase(c, building);
      await c.query(`CREATE DATABASE ${quotedName(building)}`);
      try {
        await setup(databaseUrl(building));
        // A template nobody can connect to cannot be left in use, which would make every copy fail.
        await c.query(`ALTER DATABASE ${quotedName(building)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
        await c.query(`ALTER DATABASE ${quotedName(building)} RENAME TO ${quotedName(name)}`);
      } catch (e) {
        await dropDatabase(c, building);
        throw e;
      }
      return name;
    } finally {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [`cns-test-template:${name}`]);
    }
  });
}

/** Drops a template ensureTemplate made (a test of the helper; the suite's templates stay for the next run). */
export function dropTemplate(name: string): Promise<void> {
  return withAdmin((c) => dropDatabase(c, name));
}
