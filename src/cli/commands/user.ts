import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import { adminDataDir, NoDataFolderError, openAdminDatabase } from '../adminData.ts';

async function promptPassword(): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  try {
    return (await rl.question('Password: ')).trim();
  } finally {
    rl.close();
  }
}

/**
 * `cns user create`: adds an account directly to the data folder's database (sign-up is closed
 * by default). The folder is the one `cns serve` uses (--data-dir, CNS_DATA_DIR, ./repos); a
 * folder without a database is an error unless --init asks for a new one.
 */
export function registerUserCommand(program: Command): void {
  const user = program.command('user').description('manage user accounts on this server');
  user
    .command('create')
    .description('create a user in the data folder (run on the server machine)')
    .requiredOption('-e, --email <email>', 'email address (the sign-in name)')
    .option('--password <password>', 'password (prompted on stdin when omitted)')
    .option('--name <name>', 'display name')
    .option('--admin', 'make the user a server administrator', false)
    .option('-d, --data-dir <dir>', 'data folder (CNS_DATA_DIR, default ./repos), as for `cns serve`')
    .option('--init', 'create the data folder and its database when there is none yet', false)
    .action(async (flags: { email: string; password?: string; name?: string; admin: boolean; dataDir?: string; init: boolean }) => {
      let dataDir: string;
      try {
        dataDir = await adminDataDir(flags.dataDir);
      } catch (err) {
        process.stderr.write(`cns: ${(err as Error).message}\n`);
        process.exit(2);
      }
      // Checked before the password prompt: a wrong folder is reported at once, and nothing is created.
      let db: Awaited<ReturnType<typeof openAdminDatabase>>;
      try {
        db = await openAdminDatabase(dataDir, { init: flags.init });
      } catch (err) {
        process.stderr.write(`cns: ${(err as Error).message}\n`);
        process.exit(err instanceof NoDataFolderError ? 2 : 1);
      }
      try {
        const password = flags.password ?? (await promptPassword());
        if (password.length < 8) {
          process.stderr.write('cns: passwords need at least 8 characters\n');
          process.exitCode = 2;
          return;
        }
        // Loaded on demand so that the client commands start without the database modules.
        const { UserStore } = await import('../../domain/users/userStore.ts');
        const created = await new UserStore(db).create({ email: flags.email, password, displayName: flags.name, isAdmin: flags.admin });
        process.stdout.write(`created user ${created.email} (${created.id})\n`);
      } catch (err) {
        process.stderr.write(`cns: ${(err as Error).message}\n`);
        process.exitCode = (err as { code?: string }).code === 'CONFLICT' ? 5 : 1;
      } finally {
        db.close();
      }
    });
}
