import { spawn } from 'node:child_process';

/** The git executable could not be started (not installed / not on PATH). */
export class GitMissing extends Error {}

/** A git command exited with an error. */
export class GitFailed extends Error {}

export interface SpawnGitOptions {
  env: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Exit codes that are answers rather than failures (`merge-base --is-ancestor` uses 1). */
  okCodes?: number[];
}

/**
 * Runs one system git command on a bare repository, feeding `input` on stdin, and collects its
 * output: the one place that spawns git for reading (the store's bulk history reads and the
 * git remote's push checks both use it).
 */
export function spawnGit(binary: string, gitdir: string, args: string[], o: SpawnGitOptions): Promise<{ code: number; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [`--git-dir=${gitdir}`, ...args], { env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 4096) err += c.toString();
    });
    child.stdin.on('error', () => undefined);
    child.once('error', (e) => {
      reject((e as NodeJS.ErrnoException).code === 'ENOENT' ? new GitMissing(`${binary} not found`) : e);
    });
    child.once('close', (code) => {
      const c = code ?? -1;
      if (c === 0 || o.okCodes?.includes(c)) resolve({ code: c, stdout: Buffer.concat(out) });
      else reject(new GitFailed(`git ${args[0]} exited with ${c}: ${err.trim()}`));
    });
    child.stdin.end(o.input ?? '');
  });
}

/**
 * The environment of the store's git reads: variables that would point git at other objects
 * (a hook's) removed, and replace refs and grafts off (they would show another history than the
 * one the store reads).
 */
export function storeGitEnv(): NodeJS.ProcessEnv {
  return { ...cleanEnv(), GIT_NO_REPLACE_OBJECTS: '1', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
}

/** The store's reads, in storeGitEnv(). */
export async function runGitCli(binary: string, gitdir: string, args: string[], input?: string | Buffer): Promise<Buffer> {
  return (await spawnGit(binary, gitdir, args, { env: storeGitEnv(), input })).stdout;
}

/** The environment without variables that would point git at other objects (e.g. when run from a hook). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['GIT_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH', 'GIT_INDEX_FILE', 'GIT_WORK_TREE', 'GIT_NAMESPACE']) {
    delete env[k];
  }
  return env;
}

/** Splits `git cat-file --batch` output into objects (`<oid> <type> <size>\n<content>\n`). */
export function parseCatFileBatch(buf: Buffer): Map<string, { type: string; content: Buffer }> {
  const objects = new Map<string, { type: string; content: Buffer }>();
  let i = 0;
  while (i < buf.length) {
    const nl = buf.indexOf(0x0a, i);
    if (nl < 0) break;
    const header = buf.toString('latin1', i, nl).split(' ');
    i = nl + 1;
    if (header.length !== 3 || header[1] === 'missing') continue;
    const size = Number(header[2]);
    objects.set(header[0]!, { type: header[1]!, content: buf.subarray(i, i + size) });
    i += size + 1;
  }
  return objects;
}
