import type { Command } from 'commander';
import { adminDataDir, NoDataFolderError, openAdminDatabase, openAdminMetadata } from '../adminData.ts';
import { CliError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import { Prompter } from '../client/prompt.ts';
import type { CliIo } from '../io.ts';

/** Asked without echo on a terminal; otherwise the first line of stdin, and none is a usage error. */
async function promptPassword(io: CliIo): Promise<string> {
  const password = await new Prompter(io).askHidden('Password: ', 'no password: pass --password PASSWORD, or the password as a line on stdin');
  return password.trim();
}

/**
 * `cns user create`: adds an account directly to the data folder's database (sign-up is closed
 * by default). The folder is the one `cns serve` uses (--data-dir, CNS_DATA_DIR, ./repos); a
 * folder without a database is an error unless --init asks for a new one.
 */
export function registerUserCommand(program: Command, io: CliIo): void {
  const user = program.command('user').description('manage user accounts on this server');
  user
    .command('create')
    .description('create a user in the data folder (run on the server machine)')
    .requiredOption('-e, --email <email>', 'email address (the sign-in name)')
    .option('--password <password>', 'password (else asked on a terminal, or read as one line from stdin)')
    .option('--name <name>', 'display name')
    .option('--admin', 'make the user a server administrator', false)
    .option('-d, --data-dir <dir>', 'data folder (CNS_DATA_DIR, default ./repos), as for `cns serve`')
    .option('--init', 'create the data folder and its database when there is none yet', false)
    .action(async (flags: { email: string; password?: string; name?: string; admin: boolean; dataDir?: string; init: boolean }) => {
      const dataDir = await adminDataDir(flags.dataDir, io).catch((err: Error) => {
        throw new CliError(err.message, ExitCode.USAGE);
      });
      // Checked before the password prompt: a wrong folder is reported at once, and nothing is created.
      const db = await openAdminDatabase(dataDir, { init: flags.init }).catch((err: Error) => {
        throw new CliError(err.message, err instanceof NoDataFolderError ? ExitCode.USAGE : ExitCode.FAILURE);
      });
      try {
        const password = flags.password ?? (await promptPassword(io));
        if (password.length < 8) throw new CliError('passwords need at least 8 characters', ExitCode.USAGE);
        // Loaded on demand so that the client commands start without the database modules.
        const { UserStore } = await import('../../domain/users/userStore.ts');
        const metadata = await openAdminMetadata(dataDir, io).catch((err: Error) => {
          throw new CliError(err.message, ExitCode.FAILURE);
        });
        const created = await new UserStore(metadata)
          .create({ email: flags.email, password, displayName: flags.name, isAdmin: flags.admin })
          .catch((err: Error & { code?: string }) => {
            throw new CliError(err.message, err.code === 'CONFLICT' ? ExitCode.CONFLICT : ExitCode.FAILURE);
          })
          .finally(() => metadata.close());
        io.stdout.write(`created user ${created.email} (${created.id})\n`);
      } finally {
        db.close();
      }
    });
}
