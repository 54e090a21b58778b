import { join } from 'node:path';
import type { Db } from '../db/database.ts';
import type { CliIo } from './io.ts';

/**
 * The data folder of the admin commands (`cns user`, `cns reindex`), resolved exactly as
 * `cns serve` resolves it: --data-dir, else CNS_DATA_DIR, else ./repos.
 */
export async function adminDataDir(flag: string | undefined, io: Pick<CliIo, 'env' | 'cwd'>): Promise<string> {
  const { loadSettings } = await import('../config/settings.ts');
  return loadSettings({ ...io.env, ...(flag ? { CNS_DATA_DIR: flag } : {}) }, {}, { cwd: io.cwd, givenAs: flag ? { CNS_DATA_DIR: '--data-dir' } : {} }).dataDir;
}

/** Thrown when an admin command finds no database where it looked (exit status 2: usage). */
export class NoDataFolderError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `no cns database in ${dataDir}: pass --data-dir or set CNS_DATA_DIR to the data folder of your server ` +
        '(the one `cns serve` uses; it creates it on first start)',
    );
    this.name = 'NoDataFolderError';
  }
}

/** Opens the server's existing database; creates one only when `init` (asked for explicitly). */
export async function openAdminDatabase(dataDir: string, options: { init?: boolean } = {}): Promise<Db> {
  const { openDatabase, DatabaseMissingError } = await import('../db/database.ts');
  try {
    return openDatabase(join(dataDir, 'cns.db'), { create: options.init === true });
  } catch (err) {
    if (err instanceof DatabaseMissingError) throw new NoDataFolderError(dataDir);
    throw err;
  }
}

/**
 * The metadata store of the admin commands, as the server would open it: PostgreSQL when
 * CNS_DATABASE_URL is set (checked and migrated), else SQLite in the data folder beside the
 * opened database (`openAdminDatabase`). Close it before the database.
 */
export async function openAdminMetadata(dataDir: string, io: Pick<CliIo, 'env' | 'cwd'>): Promise<import('../db/metadata/metadataStore.ts').MetadataStore> {
  const { loadSettings } = await import('../config/settings.ts');
  const settings = loadSettings(io.env, {}, { cwd: io.cwd });
  const { openPostgresMetadataOf } = await import('../db/metadata/openMetadata.ts');
  const postgres = await openPostgresMetadataOf(settings, 2);
  if (postgres) return postgres;
  const { openSqliteMetadata } = await import('../db/metadata/metadataStore.ts');
  return openSqliteMetadata(join(dataDir, 'cns.db'));
}
