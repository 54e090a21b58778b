import * as fs from 'node:fs';
import { basename } from 'node:path';

/**
 * node:fs as isomorphic-git should see a repository: a listing of `objects/pack` shows only
 * finished packs. isomorphic-git reads every `*.idx` there, but a `git repack` under way keeps
 * its pack and index as `.tmp-PID-pack-*.idx` until it renames them (git's own readers skip
 * them), so a read during a repack failed on the half-written pack, again on each retry, until
 * the repack ended (seen after a kill -9 that left a repack running).
 */
const unfinished = (name: string) => name.startsWith('.tmp-') || name.startsWith('tmp_');

async function readdir(path: fs.PathLike, ...rest: unknown[]): Promise<unknown[]> {
  const names = (await (fs.promises.readdir as (p: fs.PathLike, ...r: unknown[]) => Promise<unknown[]>)(path, ...rest)) as unknown[];
  if (basename(String(path)) !== 'pack') return names;
  return names.filter((n) => typeof n !== 'string' || !unfinished(n));
}

export const finishedPacksFs = { ...fs, promises: { ...fs.promises, readdir } } as typeof fs;
