import type { Command } from 'commander';
import type { CopyReport } from '../../db/metadata/copyToPostgres.ts';
import { adminDataDir, NoDataFolderError, openAdminDatabase } from '../adminData.ts';
import { CliError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import type { CliIo } from '../io.ts';

export interface DbCopyOptions {
  dataDir: string;
  /** A postgres:// URL (its password is never printed). */
  to: string;
}

/**
 * `cns db copy`: the records of a stopped SQLite install into an empty PostgreSQL database,
 * verified by counts per table (db/metadata/copyToPostgres.ts). The repositories and the content
 * index stay in the data folder.
 */
export async function runDbCopy(options: DbCopyOptions, print: (line: string) => void): Promise<CopyReport> {
  // Loaded here, not at the top: every `cns` command imports this file to register it.
  const { parseDatabaseUrl } = await import('../../config/databaseUrl.ts');
  const { openPostgresPool } = await import('../../db/postgres/pool.ts');
  const { checkPostgres } = await import('../../db/postgres/startupCheck.ts');
  const { copyToPostgres } = await import('../../db/metadata/copyToPostgres.ts');
  const { runningService } = await import('../../app/servicePid.ts');
  const url = parseDatabaseUrl(options.to);
  const db = await openAdminDatabase(options.dataDir);
  try {
    // Records written during the copy would be missing from it.
    const live = runningService(options.dataDir);
    if (live !== null) throw new Error(`cns serve is running on ${options.dataDir} (pid ${live}): stop it, then run cns db copy (records written meanwhile would not be copied)`);
    // The copy is one transaction; its statements may take longer than a request's.
    const pool = openPostgresPool(url, { max: 1, statementTimeoutMs: 10 * 60_000 });
    try {
      await checkPostgres(pool);
      print(`copying ${options.dataDir}/cns.db to ${url.redacted}`);
      const report = await copyToPostgres(db, pool);
      const width = Math.max(...report.tables.map((t) => t.table.length));
      for (const t of report.tables) print(`  ${t.table.padEnd(width)}  ${t.rows} rows`);
      const rows = report.tables.reduce((n, t) => n + t.rows, 0);
      print(`copied ${rows} rows in ${report.tables.length} tables; counts verified in PostgreSQL`);
      if (report.stayed.length) print(`stay in ${options.dataDir}/cns.db: ${report.stayed.join(', ')}`);
      return report;
    } finally {
      await pool.end();
    }
  } finally {
    db.close();
  }
}

export function registerDbCommands(program: Command, io: CliIo): void {
  const db = program.command('db').description("the service's database");
  db.command('copy')
    .description('copy a stopped install’s records from its SQLite database into an empty PostgreSQL database, and verify the counts')
    .option('--to <url>', 'postgres://user:password@host:5432/database (CNS_DATABASE_URL by default)')
    .option('-d, --data-dir <dir>', 'data folder holding cns.db (CNS_DATA_DIR, default ./repos), as for `cns serve`')
    .action(async (opts: { to?: string; dataDir?: string }) => {
      const to = opts.to ?? io.env.CNS_DATABASE_URL;
      if (!to) throw new CliError('cns db copy needs --to postgres://… (or CNS_DATABASE_URL)', ExitCode.USAGE);
      try {
        const dataDir = await adminDataDir(opts.dataDir, io);
        await runDbCopy({ dataDir, to }, (line) => io.stdout.write(line + '\n'));
      } catch (err) {
        throw new CliError((err as Error).message, err instanceof NoDataFolderError ? ExitCode.USAGE : ExitCode.FAILURE);
      }
    });
}
