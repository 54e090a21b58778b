import type { Command } from 'commander';
import type { ReindexReport } from '../../content/types.ts';
import { adminDataDir, NoDataFolderError, openAdminDatabase } from '../adminData.ts';
import { CliError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import type { CliIo } from '../io.ts';

export interface ReindexOptions {
  dataDir: string;
  project?: string;
}

/**
 * Rebuilds the content index of one project (or of every repository in the data folder) from git
 * alone and prints what differed. Run it with the server stopped: the rebuild is not atomic
 * with respect to concurrent writers of another process.
 */
export async function runReindex(options: ReindexOptions, print: (line: string) => void): Promise<ReindexReport[]> {
  // Loaded here, not at the top: every `cns` command imports this file to register it.
  const { ContentStore } = await import('../../content/contentStore.ts');
  // The server's database only: a reindex in the wrong folder must not create an empty one.
  const db = await openAdminDatabase(options.dataDir);
  // A second writer beside the service's workers would race their writes: stop the service first.
  const { runningService } = await import('../../app/servicePid.ts');
  const live = runningService(options.dataDir);
  if (live !== null) {
    db.close();
    throw new Error(`cns serve is running on ${options.dataDir} (pid ${live}): stop it, then run cns reindex (a reindex beside it would be a second writer of its repositories)`);
  }
  const store = new ContentStore({ dataDir: options.dataDir, db });
  try {
    const ids = options.project ? [options.project] : store.listProjects();
    const reports: ReindexReport[] = [];
    for (const id of ids) {
      const r = await store.reindexProject(id);
      reports.push(r);
      const status = r.differences.length === 0 ? 'index matched git' : `${r.differences.length} differences (index rebuilt)`;
      print(`${id}: ${r.commits} commits, ${r.nodes} nodes, ${r.versions} versions: ${status}`);
      for (const d of r.differences) print(`  ${d}`);
    }
    if (ids.length === 0) print(`no repositories in ${options.dataDir}`);
    return reports;
  } finally {
    await store.close();
    db.close();
  }
}

export function registerReindexCommand(program: Command, io: CliIo): void {
  program
    .command('reindex')
    .description('rebuild the content index from the git repositories and report differences')
    .option('--project <id>', 'only this project')
    .option('-d, --data-dir <dir>', 'data folder holding <project>.git and cns.db (CNS_DATA_DIR, default ./repos), as for `cns serve`')
    .action(async (opts: { project?: string; dataDir?: string }) => {
      try {
        const dataDir = await adminDataDir(opts.dataDir, io);
        await runReindex({ dataDir, project: opts.project }, (line) => io.stdout.write(line + '\n'));
      } catch (err) {
        throw new CliError((err as Error).message, err instanceof NoDataFolderError ? ExitCode.USAGE : ExitCode.FAILURE);
      }
    });
}
