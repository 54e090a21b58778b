import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CommandContext } from '../../src/cli/client/context.ts';
import { runCli } from '../../src/cli/runCli.ts';
import { bindFolder } from '../../src/cli/sync/folderBinding.ts';
import { SyncEngine } from '../../src/cli/sync/syncEngine.ts';
import { CNS_BIN } from '../helpers/cli.ts';
import { cleanEnv, memoryIo } from '../helpers/cliIo.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { tempDir } from '../helpers/tempDirs.ts';

export interface World {
  server: TestServer;
  token: string;
  projectId: string;
  orgId: string;
  /** XDG_CONFIG_HOME of the command-line runs (never the real one). */
  configHome: string;
}

export async function startWorld(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<World> {
  const server = await startTestServer(overrides);
  const { token } = await server.login();
  const { projectId, orgId } = await defaultProject(server, token);
  return { server, token, projectId, orgId, configHome: tempDir('cns-sync-cfg-') };
}

/** A fresh folder holding `files` (relative path → content). */
export function folderWith(files: Record<string, string | Buffer> = {}): string {
  const dir = tempDir('cns-sync-dir-');
  for (const [rel, content] of Object.entries(files)) put(dir, rel, content);
  return dir;
}

export function put(dir: string, rel: string, content: string | Buffer): void {
  const file = join(dir, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

export function read(dir: string, rel: string): string {
  return readFileSync(join(dir, rel), 'utf8');
}

/** Every synced file of a folder (not .cns/) with its text. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!rel.isFile()) continue;
    const full = join(rel.parentPath, rel.name);
    const r = full.slice(dir.length + 1).split('\\').join('/');
    if (r.startsWith('.cns/')) continue;
    out[r] = readFileSync(full, 'utf8');
  }
  return out;
}

/** The sync engine of a folder, in process (bootstrapping it on first use) — the same code `cns sync` runs. */
export async function engineFor(w: World, dir: string, options: { path?: string } = {}): Promise<SyncEngine> {
  const ctx = new CommandContext({ server: w.server.url, token: w.token, project: w.projectId }, memoryIo({ env: envOf(w) }).io);
  return new SyncEngine(await bindFolder(ctx, dir, options), { progress: false });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a command-line run against the world's server, signed in with its token. */
function envOf(w: World, env: Record<string, string> = {}): Record<string, string | undefined> {
  return { ...cleanEnv(), XDG_CONFIG_HOME: w.configHome, CNS_SERVER: w.server.url, CNS_TOKEN: w.token, ...env };
}

/** `cns ARGS` against the world's server, in this process (`runCli`). */
export async function cns(w: World, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const m = memoryIo({ env: envOf(w, env) });
  const code = await runCli(args, m.io);
  return { code, stdout: m.stdoutBytes().toString('utf8'), stderr: m.stderr() };
}

/**
 * `cns ARGS` as a child process with its output: for what measures a real client against the
 * server (one event loop each; in-process, the big uploads and the server's commits take turns).
 */
export function cnsProcess(w: World, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const child = spawnCns(w, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** `cns ARGS` as a child process (for what needs a process of its own: signals, the folder lock's pid). */
export function spawnCns(w: World, args: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, [CNS_BIN, ...args], { env: envOf(w, env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Polls `check` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
