import type { ServerDatabase } from './serverDatabasePool.ts';
import { databaseForServer, engineEnv } from './testEngine.ts';

/**
 * On PostgreSQL (CNS_TEST_ENGINE=postgres), one database per data folder of this test process:
 * a server started again on the same folder must find the records the previous one left, as it
 * does in cns.db. A folder the helper made gives its database back at the server's stop; one the
 * test gave may be started again later, so its database stays claimed until the process exits.
 */
const byDataDir = new Map<string, Promise<ServerDatabase | null>>();

/** The environment that points a server of `dataDir` at its database (empty on SQLite). */
export async function databaseOfDataDir(dataDir: string): Promise<Record<string, string>> {
  let database = byDataDir.get(dataDir);
  if (!database) {
    database = databaseForServer();
    byDataDir.set(dataDir, database);
    // A failed claim is not kept: the next start tries again.
    database.catch(() => byDataDir.delete(dataDir));
  }
  return engineEnv(await database);
}

/** Gives the database of `dataDir` back to the pool now (its server stopped and the folder is gone). */
export async function releaseDatabaseOfDataDir(dataDir: string): Promise<void> {
  const database = await byDataDir.get(dataDir)?.catch(() => null);
  byDataDir.delete(dataDir);
  await database?.release();
}
