import { Command, CommanderError } from 'commander';
import { serviceVersion } from '../config/version.ts';
import { CliError, Reported } from './client/errors.ts';
import { ExitCode } from './client/exitCodes.ts';
import { applyGlobalOptions, globalOptions, shortUsageHints } from './client/globalOptions.ts';
import { clientHelp } from './client/helpText.ts';
import { registerArchiveCommands } from './commands/archives.ts';
import { registerBrowseCommands } from './commands/browse.ts';
import { registerCloneCommand } from './commands/clone.ts';
import { registerClusterCommands } from './commands/cluster.ts';
import { registerDbCommands } from './commands/db.ts';
import { registerFileCommands } from './commands/files.ts';
import { registerGitCredentialCommand } from './commands/gitCredential.ts';
import { registerHistoryCommands } from './commands/history.ts';
import { registerKeysCommands } from './commands/keys.ts';
import { registerWebhooksCommands } from './commands/webhooks.ts';
import { registerLoginCommands } from './commands/login.ts';
import { registerProjectsCommands } from './commands/projects.ts';
import { registerPurgeCommand } from './commands/purge.ts';
import { registerReindexCommand } from './commands/reindex.ts';
import { registerSearchCommand } from './commands/search.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSyncCommand } from './commands/sync.ts';
import { registerUserCommand } from './commands/user.ts';
import { registerWriteCommand } from './commands/write.ts';
import type { CliIo } from './io.ts';

/** `cns`: one executable for the server (`cns serve`) and, command by command, its clients. Built anew for each run. */
function program(io: CliIo): Command {
  const cns = new Command()
    .name('cns')
    .description('Content Node Service: a git-backed, versioned store of content for people and agents')
    .version(serviceVersion)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Every message of the command line starts with `cns: `, commander's usage errors too.
      outputError: (s, write) => write(`cns: ${s.replace(/^error: /, '')}`),
    })
    // Program options only before the command, so `cns cat PATH --version 2` is cat's option;
    // the global options given there are handed to the command that runs.
    .enablePositionalOptions()
    .addHelpText('after', clientHelp)
    .hook('preAction', (_program, action) => applyGlobalOptions(action))
    // Commander would exit the process; it throws instead, and the run answers the status.
    .exitOverride();
  globalOptions(cns);
  for (const register of [
    registerServeCommand,
    registerUserCommand,
    registerReindexCommand,
    registerDbCommands,
    registerGitCredentialCommand,
    registerLoginCommands,
    registerProjectsCommands,
    registerPurgeCommand,
    registerBrowseCommands,
    registerWriteCommand,
    registerFileCommands,
    registerArchiveCommands,
    registerHistoryCommands,
    registerKeysCommands,
    registerWebhooksCommands,
    registerCloneCommand,
    registerSyncCommand,
    registerSearchCommand,
    registerClusterCommands,
  ]) {
    register(cns, io);
  }
  shortUsageHints(cns);
  return cns;
}

/**
 * Runs `cns ARGS` (argv without the node and script names) with `io` and answers its exit status.
 * Nothing exits the process and nothing is kept between runs, so tests run it in-process.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await program(io).parseAsync(argv, { from: 'user' });
    return ExitCode.OK;
  } catch (err) {
    // Commander has printed the usage error (or the help, or the version) already.
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    if (err instanceof Reported) return err.exitCode;
    io.stderr.write(`cns: ${(err as Error)?.message ?? String(err)}\n`);
    return err instanceof CliError ? err.exitCode : ExitCode.FAILURE;
  }
}
