import { spawn } from 'node:child_process';
import { baseGitEnv } from './gitConfig.ts';

export interface RunGitOptions {
  gitdir: string;
  /** Extra environment (the quarantine's object directories). */
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Exit codes that are answers rather than failures (`merge-base --is-ancestor` uses 1). */
  okCodes?: number[];
}

/** Runs one system git command on a bare repository and collects its output. */
export function runGit(args: string[], o: RunGitOptions): Promise<{ code: number; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${o.gitdir}`, ...args], {
      env: { ...baseGitEnv(), ...o.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 4096) err += c.toString();
    });
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (code) => {
      const c = code ?? -1;
      if (c === 0 || o.okCodes?.includes(c)) resolve({ code: c, stdout: Buffer.concat(out) });
      else reject(new Error(`git ${args[0]} exited with ${c}: ${err.trim()}`));
    });
    child.stdin.end(o.input ?? '');
  });
}
