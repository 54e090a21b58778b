import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunLimits, RunRequest, SandboxRuntime } from '../../src/sandbox/runtime/runtime.ts';

/** Small limits, so that attacks end fast. */
export const SMALL_LIMITS: RunLimits = {
  timeoutMs: 10_000,
  memoryBytes: 64 * 1024 * 1024,
  maxProcesses: 32,
  maxOutputBytes: 64 * 1024,
  maxDiskBytes: 8 * 1024 * 1024,
};

/** A token in every temp folder and command of this test process: what the leftover scan looks for. */
export const MARKER = `cnsrt${process.pid}x`;

const made: string[] = [];

/** A fresh working folder with a few files, owned by the runtime's uid as the workspace leaves it. */
export async function workFolder(runtime: Pick<SandboxRuntime, 'owner'>, files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `${MARKER}-work-`));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  if (runtime.owner) {
    await chown(dir, runtime.owner.uid, runtime.owner.gid);
    for (const name of Object.keys(files)) await chown(join(dir, name), runtime.owner.uid, runtime.owner.gid);
  }
  return dir;
}

/** A folder outside every working folder, with a world-readable secret in it (stands for the data folder). */
export async function secretFolder(secret: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `${MARKER}-data-`));
  made.push(dir);
  await writeFile(join(dir, 'secret.txt'), secret, { mode: 0o644 });
  return dir;
}

export async function removeFolders(): Promise<void> {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Runs a command with the small limits (overridable); the marker rides along as a comment. */
export function run(runtime: SandboxRuntime, workDir: string, command: string, extra: Partial<Omit<RunRequest, 'command' | 'workDir' | 'limits'>> & { limits?: Partial<RunLimits> } = {}) {
  return runtime.run({
    command: `${command}\n# ${MARKER}`,
    workDir,
    readOnly: extra.readOnly ?? false,
    stdin: extra.stdin,
    signal: extra.signal,
    limits: { ...SMALL_LIMITS, ...extra.limits },
  });
}

/** Processes whose command line carries this test process's marker (bwrap with our folders, sh -c with our commands). */
export async function markedProcesses(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(MARKER)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ').slice(0, 120)}`);
  }
  return found;
}

/** Pids of this test process's just-bash child processes. */
export async function justBashChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status) && cmdline.includes('justBashChild.mjs')) found.push(Number(pid));
  }
  return found;
}
