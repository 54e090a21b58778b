import type { Command } from 'commander';
import type { Settings } from '../../config/settings.ts';
import { CliError } from '../client/errors.ts';
import { ExitCode } from '../client/exitCodes.ts';
import type { CliIo } from '../io.ts';

interface ServeFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  baseUrl?: string;
  logLevel?: string;
  workers?: string;
}

/** Flags override the environment, which overrides the embedded defaults. */
export async function settingsFromFlags(flags: ServeFlags, io: Pick<CliIo, 'env' | 'cwd'>): Promise<Settings> {
  return (await settingsAndEnv(flags, io)).settings;
}

/** The settings, and the environment they were read from (what the workers of a primary read). */
async function settingsAndEnv(flags: ServeFlags, io: Pick<CliIo, 'env' | 'cwd'>): Promise<{ settings: Settings; env: Record<string, string | undefined> }> {
  // Loaded on demand (as the server below) so that the client commands start quickly.
  const { loadSettings } = await import('../../config/settings.ts');
  const env = { ...io.env };
  const givenAs: Record<string, string> = {};
  const flag = (value: string | undefined, variable: string, name: string) => {
    if (value === undefined) return;
    env[variable] = value;
    givenAs[variable] = name;
  };
  flag(flags.port, 'PORT', '--port');
  flag(flags.host, 'HOST', '--host');
  flag(flags.dataDir, 'CNS_DATA_DIR', '--data-dir');
  flag(flags.baseUrl, 'CNS_BASE_URL', '--base-url');
  flag(flags.logLevel, 'CNS_LOG_LEVEL', '--log-level');
  flag(flags.workers, 'CNS_WORKERS', '--workers');
  const settings = loadSettings(env, {}, { cwd: io.cwd, givenAs });
  // Workers read the same settings; the data folder as resolved here, whatever their directory.
  return { settings, env: { ...env, CNS_DATA_DIR: settings.dataDir } };
}

/** Runs the service until the user stops it (SIGINT, SIGTERM); the run's exit status is 0 after a clean stop. */
async function serve(io: CliIo, flags: ServeFlags): Promise<void> {
  let settings: Settings;
  let env: Record<string, string | undefined>;
  try {
    ({ settings, env } = await settingsAndEnv(flags, io));
  } catch (err) {
    throw new CliError((err as Error).message, ExitCode.USAGE);
  }
  if (settings.workers > 1) return servePrimary(io, settings, env);
  const { startServer } = await import('../../app/server.ts');
  const { ListenError } = await import('../../app/listenError.ts');
  const { createLogger } = await import('../../logging/logger.ts');
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(settings, createLogger(settings.logLevel, io.stdout));
  } catch (err) {
    // One line, no stack trace: the port is taken, the data folder is unusable…
    throw new CliError(err instanceof ListenError ? err.message : `cannot start: ${(err as Error).message}`);
  }
  const out = (line: string) => io.stdout.write(line + '\n');
  // Listening for the stop first: a supervisor may signal as soon as it reads the "listening" line.
  const stopped = new Promise<string>((resolve) => io.onStop(resolve));

  const { writeServicePid } = await import('../../app/servicePid.ts');
  const dropPid = writeServicePid(settings.dataDir);
  printFirstStart(out, settings, running.bootstrap.createdAdmin);
  // The address really bound: 0.0.0.0 (or ::) means every interface, reachable from other machines.
  const reach = running.listenUrl === running.url ? '' : `every interface, e.g. ${running.url}; `;
  out(`cns: listening on ${running.listenUrl} (${reach}API ${running.services.settings.baseUrl}/api/v1, data ${settings.dataDir})`);

  const why = await Promise.race([stopped.then((signal) => ({ signal })), running.stoppedItself.then((reason) => ({ reason }))]);
  if ('signal' in why) out(`cns: ${why.signal} received, finishing requests in flight`);
  try {
    await running.close();
  } catch (err) {
    throw new CliError(`shutdown failed: ${String(err)}`);
  } finally {
    dropPid();
  }
  if ('reason' in why) throw new CliError(`stopped: ${why.reason}`);
}

/** Several workers: a thin primary (src/cluster/primary.ts) that loads none of the service itself. */
async function servePrimary(io: CliIo, settings: Settings, env: Record<string, string | undefined>): Promise<void> {
  const { startPrimary } = await import('../../app/primary.ts');
  const { ListenError } = await import('../../app/listenError.ts');
  const out = (line: string) => io.stdout.write(line + '\n');
  let running: Awaited<ReturnType<typeof startPrimary>>;
  try {
    running = await startPrimary({ workers: settings.workers, host: settings.host, port: settings.port, env, cwd: io.cwd, log: out });
  } catch (err) {
    throw new CliError(err instanceof ListenError ? err.message : `cannot start: ${(err as Error).message}`);
  }
  const stopped = new Promise<string>((resolve) => io.onStop(resolve));
  const { writeServicePid } = await import('../../app/servicePid.ts');
  const dropPid = writeServicePid(settings.dataDir);
  printFirstStart(out, settings, running.firstStart);
  const everywhere = settings.host === '0.0.0.0' || settings.host === '::';
  const bracket = (h: string) => (h.includes(':') ? `[${h}]` : h);
  const listenUrl = `http://${bracket(settings.host)}:${running.port}`;
  const reach = everywhere ? `every interface, e.g. http://127.0.0.1:${running.port}; ` : '';
  out(`cns: listening on ${listenUrl} (${reach}API ${running.baseUrl}/api/v1, data ${settings.dataDir}, ${settings.workers} workers)`);
  const why = await Promise.race([stopped.then((signal) => ({ signal })), running.stoppedItself.then((reason) => ({ reason }))]);
  if ('signal' in why) out(`cns: ${why.signal} received, finishing requests in flight`);
  try {
    await running.close();
  } finally {
    dropPid();
  }
  if ('reason' in why) throw new CliError(`stopped: ${why.reason}`);
}

function printFirstStart(out: (line: string) => void, settings: Settings, admin: { email: string; generatedPassword: string | null } | null): void {
  if (admin) {
    out(`cns: first start: initialized data folder ${settings.dataDir}`);
    if (admin.generatedPassword) {
      out(`cns: created administrator ${admin.email} with password: ${admin.generatedPassword}`);
      out('cns: this password is shown only once; set CNS_ADMIN_EMAIL/CNS_ADMIN_PASSWORD to choose your own.');
    } else {
      out(`cns: created administrator ${admin.email} (password from CNS_ADMIN_PASSWORD)`);
    }
  }
}

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the service (settings from flags and CNS_* environment variables; see README)')
    .option('-p, --port <port>', 'port to listen on (PORT, default 8080)')
    .option('--host <host>', 'address to bind (HOST, default 0.0.0.0)')
    .option('-d, --data-dir <dir>', 'data folder for the database and repositories (CNS_DATA_DIR, default ./repos)')
    .option('--base-url <url>', 'public address used in links (CNS_BASE_URL)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (CNS_LOG_LEVEL, default info)')
    .option('-w, --workers <n>', 'worker processes: auto (the cores, at most 8) or a number; 1 = one process (CNS_WORKERS, default auto)')
    .action((flags: ServeFlags) => serve(io, flags));
}
