import { Command } from 'commander';
import { serviceVersion } from '../app/version.ts';
import { registerGitCredentialCommand } from './commands/gitCredential.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerUserCommand } from './commands/user.ts';

/** `cns`: one executable for the server (`cns serve`) and, command by command, its clients. */
const program = new Command()
  .name('cns')
  .description('Content Node Service: a git-backed, versioned store of content for people and agents')
  .version(serviceVersion)
  .showHelpAfterError();

registerServeCommand(program);
registerUserCommand(program);
registerGitCredentialCommand(program);

await program.parseAsync(process.argv);
