import type { Command } from 'commander';
import { clientOptions, runClient } from '../client/context.ts';
import type { CliIo } from '../io.ts';
import type { SyncFlags } from './syncRun.ts';

export function registerSyncCommand(program: Command, io: CliIo): void {
  const cmd = program
    .command('sync')
    .description('two-way sync of a local folder with a project (or --path subtree); --watch keeps it in sync live')
    .argument('<dir>', 'the local folder (created if missing; its state lives in DIR/.cns/)')
    .option('--path <subtree>', 'sync only this subtree of the project (first run only)')
    .option('--name <name>', "the sync's name, the author of the versions it writes (first run only; default: folder <host name>)")
    .option('-w, --watch', 'keep running: local changes go up as they happen, project changes arrive through the live feed')
    .addHelpText(
      'after',
      `
Ignores .cns/, .git/ and the patterns of DIR/.cnsignore (gitignore syntax). A file changed on both
sides is merged line by line when the edits do not overlap; otherwise the project's version stays
in place and yours is saved beside it as NAME.conflict-<time>.EXT. Files deleted in the project go
to DIR/.cns/trash/. Exit status 0 when the folder is in sync (conflicts kept on both sides count).`,
    );
  clientOptions(cmd).action(async (dir: string, flags: SyncFlags) => {
    await runClient(io, flags, async (ctx) => {
      const { runSync } = await import('./syncRun.ts');
      await runSync(ctx, dir, flags);
    });
  });
}
