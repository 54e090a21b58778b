import { spawnSync } from 'node:child_process';
import { POSTGRES_ADMIN_URL, type TestDatabase } from './postgresDatabases.ts';
import { databaseForServer, engineEnv } from './testEngine.ts';

/**
 * On PostgreSQL (CNS_TEST_ENGINE=postgres), one database per data folder of this test process:
 * a server started again on the same folder must find the records the previous one left, as it
 * does in cns.db. A folder the helper made is released at the server's stop; one the test gave
 * may be started again later, so its database is dropped when the test process exits.
 */
const byDataDir = new Map<string, Promise<TestDatabase | null>>();
/** The databases made and not dropped yet, by name: what the exit handler drops. */
const live = new Set<string>();

/** The environment that points a server of `dataDir` at its database (empty on SQLite). */
export async function databaseOfDataDir(dataDir: string): Promise<Record<string, string>> {
  let database = byDataDir.get(dataDir);
  if (!database) {
    database = databaseForServer().then((d) => {
      if (d) live.add(d.name);
      return d;
    });
    byDataDir.set(dataDir, database);
    // A failed creation is not kept: the next start tries again.
    database.catch(() => byDataDir.delete(dataDir));
  }
  return engineEnv(await database);
}

/** Drops the database of `dataDir` now (its server stopped and the folder is gone). */
export async function releaseDatabaseOfDataDir(dataDir: string): Promise<void> {
  const database = await byDataDir.get(dataDir)?.catch(() => null);
  byDataDir.delete(dataDir);
  if (!database) return;
  await database.drop();
  live.delete(database.name);
}

// 'exit' handlers cannot wait for a promise, so the rest go by dropdb, synchronously (--force: a
// server a failed test never stopped may still hold connections).
process.once('exit', () => {
  for (const name of live) spawnSync('dropdb', ['--force', '--if-exists', `--maintenance-db=${POSTGRES_ADMIN_URL}`, name], { stdio: 'ignore' });
});
