import { Command } from 'commander';
import { serviceVersion } from '../config/version.ts';
import { ExitCode } from './client/exitCodes.ts';
import { clientHelp } from './client/helpText.ts';
import { registerBrowseCommands } from './commands/browse.ts';
import { registerCloneCommand } from './commands/clone.ts';
import { registerFileCommands } from './commands/files.ts';
import { registerGitCredentialCommand } from './commands/gitCredential.ts';
import { registerHistoryCommands } from './commands/history.ts';
import { registerKeysCommands } from './commands/keys.ts';
import { registerLoginCommands } from './commands/login.ts';
import { registerProjectsCommands } from './commands/projects.ts';
import { registerPurgeCommand } from './commands/purge.ts';
import { registerReindexCommand } from './commands/reindex.ts';
import { registerSearchCommand } from './commands/search.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSyncCommand } from './commands/sync.ts';
import { registerUserCommand } from './commands/user.ts';
import { registerWriteCommand } from './commands/write.ts';

/** `cns`: one executable for the server (`cns serve`) and, command by command, its clients. */
const program = new Command()
  .name('cns')
  .description('Content Node Service: a git-backed, versioned store of content for people and agents')
  .version(serviceVersion)
  .showHelpAfterError()
  // Program options only before the command, so `cns cat PATH --version 2` is cat's option.
  .enablePositionalOptions()
  .addHelpText('after', clientHelp)
  // Commander exits 1 on bad usage; usage errors have their own status (help and --version exit 0).
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : ExitCode.USAGE));

registerServeCommand(program);
registerUserCommand(program);
registerReindexCommand(program);
registerGitCredentialCommand(program);
registerLoginCommands(program);
registerProjectsCommands(program);
registerPurgeCommand(program);
registerBrowseCommands(program);
registerWriteCommand(program);
registerFileCommands(program);
registerHistoryCommands(program);
registerKeysCommands(program);
registerCloneCommand(program);
registerSyncCommand(program);
registerSearchCommand(program);

await program.parseAsync(process.argv);
