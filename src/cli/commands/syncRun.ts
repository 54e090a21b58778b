import { resolve } from 'node:path';
import type { ClientFlags, CommandContext } from '../client/context.ts';
import { CliError, usageError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import { changedAnything, describeReport, type CycleReport } from '../sync/cycleReport.ts';
import { bindFolder } from '../sync/folderBinding.ts';
import { FolderWatcher } from '../sync/folderWatcher.ts';
import { SyncEngine } from '../sync/syncEngine.ts';

export interface SyncFlags extends ClientFlags {
  path?: string;
  name?: string;
  watch?: boolean;
}

function presentReport(r: CycleReport) {
  return {
    in_sync: r.errors.length === 0,
    project_version: r.cursor,
    run_id: r.runId,
    uploaded: r.uploaded,
    downloaded: r.downloaded,
    renamed_remote: r.renamedRemote,
    renamed_local: r.renamedLocal,
    deleted_remote: r.deletedRemote,
    deleted_local: r.deletedLocal,
    merged: r.merged,
    conflicts: r.conflicts.map((c) => ({ path: c.path, local_copy: c.localCopy })),
    kept_local: r.keptLocal,
    errors: r.errors,
  };
}

async function once(ctx: CommandContext, engine: SyncEngine, dir: string): Promise<void> {
  const report = await engine.cycle();
  await engine.prune();
  ctx.out.result(presentReport(report), () => {
    for (const line of describeReport(report)) ctx.out.line(line);
    if (report.errors.length === 0) {
      ctx.out.line(changedAnything(report) ? `In sync: ${dir} at project version ${report.cursor}` : `Already in sync: ${dir} at project version ${report.cursor}`);
    }
  });
  if (report.errors.length > 0) throw new CliError(`${report.errors.length} file(s) could not be synced`, ExitCode.FAILURE, 'SYNC_ERRORS');
}

async function watchFolder(ctx: CommandContext, engine: SyncEngine, store: ConstructorParameters<typeof FolderWatcher>[1], dir: string): Promise<void> {
  const time = () => new Date().toISOString().slice(11, 19);
  let fatal: Error | null = null;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const watcher = new FolderWatcher(engine, store, {
    onCycle: (r) => {
      if (ctx.out.json) {
        if (changedAnything(r) || r.errors.length) ctx.out.raw(JSON.stringify(presentReport(r)) + '\n');
      } else {
        for (const line of describeReport(r)) ctx.out.line(`${time()} ${line}`);
      }
    },
    onError: (err) => ctx.io.stderr.write(`cns sync: ${err.message}\n`),
    onFatal: (err) => {
      fatal = err;
      finish();
    },
  });
  await watcher.start();
  const stopListening = ctx.io.onStop(finish);
  if (!ctx.out.json) ctx.io.stderr.write(`Watching ${dir} (project ${engine.config.projectId}${engine.config.scopePath ? `, ${engine.config.scopePath}` : ''}); Ctrl-C to stop\n`);
  await done;
  stopListening();
  await watcher.stop();
  if (fatal) throw fatal;
}

/** `cns sync DIR`: one cycle, or `--watch`. Loaded only when the command runs (it pulls in the sync engine and chokidar). */
export async function runSync(ctx: CommandContext, dir: string, flags: SyncFlags): Promise<void> {
  const root = resolve(ctx.io.cwd, dir);
  const store = await bindFolder(ctx, root, flags);
  const lock = store.lock();
  if (typeof lock === 'number') throw usageError(`another cns sync (pid ${lock}) is working on ${root}`);
  try {
    const engine = new SyncEngine(store, { progress: !flags.watch && !flags.json && ctx.io.stderr });
    if (flags.watch) await watchFolder(ctx, engine, store, root);
    else await once(ctx, engine, root);
  } finally {
    lock();
  }
}
