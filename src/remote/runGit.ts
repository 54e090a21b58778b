import { spawnGit } from '../content/git/gitCli.ts';
import { baseGitEnv } from './gitConfig.ts';

export interface RunGitOptions {
  gitdir: string;
  /** Extra environment (the quarantine's object directories). */
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Exit codes that are answers rather than failures (`merge-base --is-ancestor` uses 1). */
  okCodes?: number[];
}

/** Runs one system git command on a bare repository with the remote's git settings. */
export function runGit(args: string[], o: RunGitOptions): Promise<{ code: number; stdout: Buffer }> {
  return spawnGit('git', o.gitdir, args, { env: { ...baseGitEnv(), ...o.env }, input: o.input, okCodes: o.okCodes });
}
