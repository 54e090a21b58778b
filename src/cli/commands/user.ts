import type { Command } from 'commander';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';

async function promptPassword(): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  try {
    return (await rl.question('Password: ')).trim();
  } finally {
    rl.close();
  }
}

/** `cns user create`: adds an account directly to the data folder's database (sign-up is closed by default). */
export function registerUserCommand(program: Command): void {
  const user = program.command('user').description('manage user accounts on this server');
  user
    .command('create')
    .description('create a user in the data folder (run on the server machine)')
    .requiredOption('-e, --email <email>', 'email address (the sign-in name)')
    .option('--password <password>', 'password (prompted on stdin when omitted)')
    .option('--name <name>', 'display name')
    .option('--admin', 'make the user a server administrator', false)
    .option('-d, --data-dir <dir>', 'data folder (CNS_DATA_DIR, default ./repos)')
    .action(async (flags: { email: string; password?: string; name?: string; admin: boolean; dataDir?: string }) => {
      // Loaded on demand so that the client commands start without the settings and database modules.
      const [{ loadSettings }, { openDatabase }, { UserStore }] = await Promise.all([
        import('../../config/settings.ts'),
        import('../../db/database.ts'),
        import('../../domain/users/userStore.ts'),
      ]);
      const settings = loadSettings({ ...process.env, ...(flags.dataDir ? { CNS_DATA_DIR: flags.dataDir } : {}) });
      const password = flags.password ?? (await promptPassword());
      if (password.length < 8) {
        process.stderr.write('cns: passwords need at least 8 characters\n');
        process.exit(2);
      }
      const db = openDatabase(join(settings.dataDir, 'cns.db'));
      try {
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
