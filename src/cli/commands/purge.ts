import type { Command } from 'commander';
import { withIo } from '../client/action.ts';
import type { CliIo } from '../io.ts';
import { clientOptions, runClient, type ClientFlags } from '../client/context.ts';
import { CliError, usageError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import { Prompter } from '../client/prompt.ts';
import { requiredRemotePath } from '../client/remotePath.ts';

interface PurgeAnswer {
  path: string;
  before: string;
  after: string;
  commits_rewritten: number;
  removed_node_ids: string[];
}

/** `cns purge PATH`: removes a path from the project's whole git history (organization owners and admins). */
async function purge(io: CliIo, path: string, flags: ClientFlags & { yes?: boolean }): Promise<void> {
  await runClient(io, flags, async (ctx) => {
    const project = await ctx.project();
    const target = requiredRemotePath(path);
    if (!flags.yes) {
      const prompter = new Prompter(io);
      if (!prompter.interactive) throw usageError('a purge rewrites the history of the project for everyone: pass --yes to confirm');
      const typed = await prompter.ask(`Remove "${target}" from the whole history of ${project.name}? Every clone must be cloned again. Type the path to confirm: `);
      if (typed !== target) throw new CliError('not purged: the path did not match', ExitCode.FAILURE, 'CANCELLED');
    }
    const { data, message } = await ctx.api.post<PurgeAnswer>(`/projects/${encodeURIComponent(project.id)}/purge`, { path: target });
    ctx.out.result(data, () => ctx.out.line(`${message} (${data.commits_rewritten} commits rewritten, ${data.removed_node_ids.length} node(s) removed)`));
  });
}

export function registerPurgeCommand(program: Command, io: CliIo): void {
  clientOptions(program.command('purge').description('remove a path from the whole git history (organization owners and admins)').argument('<path>', 'path to purge'))
    .option('-y, --yes', 'do not ask for confirmation')
    .action(withIo(io, purge));
}
