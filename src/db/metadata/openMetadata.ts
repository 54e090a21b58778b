import type { Settings } from '../../config/settings.ts';
import type { Logger } from '../../logging/logger.ts';
import { runPostgresMigrations, SchemaNewerError } from '../postgres/migrate.ts';
import { openPostgresPool } from '../postgres/pool.ts';
import { checkPostgres, PostgresStartupError, startupFailure } from '../postgres/startupCheck.ts';
import type { MetadataStore } from './metadataStore.ts';
import { openPostgresMetadata } from './postgresMetadata.ts';

/**
 * The metadata store on PostgreSQL when CNS_DATABASE_URL is set, ready to use: reachable, the
 * credentials accepted, migrated (several processes starting together migrate once, under the
 * runner's lock). Anything in the way is a PostgresStartupError with one line that names the
 * problem and never the password. Null without the setting: SQLite in the data folder, which
 * createServices opens beside the content index.
 */
export async function openPostgresMetadataOf(settings: Pick<Settings, 'databaseUrl' | 'databaseStatementTimeoutMs'>, poolMax: number, logger?: Logger): Promise<MetadataStore | null> {
  const url = settings.databaseUrl;
  if (!url) return null;
  const pool = openPostgresPool(url, {
    max: poolMax,
    statementTimeoutMs: settings.databaseStatementTimeoutMs,
    // An idle connection the server dropped (a restart): the pool has let it go and opens another on demand.
    onIdleError: (err) => logger?.warn({ err: { message: err.message } }, 'metadata database: an idle connection was lost'),
  });
  try {
    await checkPostgres(pool);
    await runPostgresMigrations(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    if (e instanceof PostgresStartupError) throw e;
    const { host, port, user, database, password } = url.connection;
    if (e instanceof SchemaNewerError) throw new PostgresStartupError('schema', `PostgreSQL database ${database} at ${host}:${port}: ${e.message}; run that version, or restore a backup made for this one`);
    throw startupFailure(e, { host, port, user, database, password });
  }
  return openPostgresMetadata(pool);
}
