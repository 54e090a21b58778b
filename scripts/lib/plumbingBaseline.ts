import git from 'isomorphic-git';
import * as fs from 'node:fs';
import { join } from 'node:path';

/**
 * The baseline of figure 1: a plain isomorphic-git plumbing loop, one commit per write
 * (blob, read the three trees on the path, write them back, commit, move the ref), on disk.
 */
export async function plumbingCommitsPerSecond(dir: string, commits: number): Promise<number> {
  const gitdir = join(dir, 'baseline.git');
  await git.init({ fs, gitdir, bare: true, defaultBranch: 'main' });
  const cache = {};
  const author = { name: 'bench', email: 'bench@example.com', timestamp: 0, timezoneOffset: 0 };
  const started = process.hrtime.bigint();
  let parent: string | null = null;
  let root: { mode: string; path: string; oid: string; type: 'blob' | 'tree' | 'commit' }[] = [];
  for (let i = 0; i < commits; i++) {
    const blob = await git.writeBlob({ fs, gitdir, blob: Buffer.from(`write ${i}\n`) });
    const a = parent ? (await git.readTree({ fs, gitdir, oid: parent, filepath: 'bench', cache }).catch(() => null))?.tree ?? [] : [];
    const b = parent ? (await git.readTree({ fs, gitdir, oid: parent, filepath: 'bench/sub', cache }).catch(() => null))?.tree ?? [] : [];
    const name = `f${i % 1000}.md`;
    const leaf = [...b.filter((e) => e.path !== name), { mode: '100644', path: name, oid: blob, type: 'blob' as const }];
    const subOid = await git.writeTree({ fs, gitdir, tree: leaf });
    const mid = [...a.filter((e) => e.path !== 'sub'), { mode: '040000', path: 'sub', oid: subOid, type: 'tree' as const }];
    const midOid = await git.writeTree({ fs, gitdir, tree: mid });
    root = [...root.filter((e) => e.path !== 'bench'), { mode: '040000', path: 'bench', oid: midOid, type: 'tree' }];
    const rootOid = await git.writeTree({ fs, gitdir, tree: root });
    const commit: string = await git.writeCommit({
      fs,
      gitdir,
      commit: { message: `write ${i}\n`, tree: rootOid, parent: parent ? [parent] : [], author, committer: author },
    });
    await git.writeRef({ fs, gitdir, ref: 'refs/heads/main', value: commit, force: true });
    parent = commit;
  }
  return commits / (Number(process.hrtime.bigint() - started) / 1e9);
}
