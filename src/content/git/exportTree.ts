import { spawn } from 'node:child_process';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { NotFoundError } from '../../errors/contentErrors.ts';
import { PLACEHOLDER, TRASH_DIR } from '../paths.ts';
import { storeGitEnv } from './gitCli.ts';
import type { Repo } from './repo.ts';
import { TarFilter, type ExportedEntry, type TarEntry } from './tarFilter.ts';

export type { ExportedEntry };

/** What an export leaves out: placeholders of empty folders (their folders stay), and the trash at the root. */
export function keepEntry(path: string, atRoot: boolean) {
  return (e: TarEntry): boolean => {
    if (e.kind === 'file' && (e.path === PLACEHOLDER || e.path.endsWith(`/${PLACEHOLDER}`))) return false;
    return !(atRoot && (e.path === TRASH_DIR || e.path.startsWith(`${TRASH_DIR}/`)));
  };
}

/**
 * Writes the tree of `commitId` at `path` ('' = the root) into the existing folder `destDir` and
 * returns what it wrote: regular files with their stored bytes and modes, folders (empty ones
 * included), no `.cnskeep`, no `.trash` when exporting the root, no symbolic links (a submodule
 * is an empty folder), all owned by `owner` (`destDir` itself is left as it is). With git this is
 * `git archive` filtered in-process and unpacked by `tar -x` (both spawned: the event loop only
 * moves bytes); without git it reads trees and blobs. On failure `destDir` may hold part of it.
 */
export async function exportTree(repo: Repo, gitBinary: string | null, commitId: string, path: string, destDir: string, owner: Owner = null): Promise<ExportedEntry[]> {
  if (gitBinary) {
    try {
      return await archiveInto(repo.gitdir, gitBinary, commitId, path, destDir, owner);
    } catch (e) {
      if (!(e instanceof ProgramMissing)) throw e;
    }
  }
  return readInto(repo, commitId, path, destDir, owner);
}

/** Who the written files and folders belong to; null: whoever runs us. Another user needs root. */
export type Owner = { uid: number; gid: number } | null;

class ProgramMissing extends Error {}

async function archiveInto(gitdir: string, gitBinary: string, commitId: string, path: string, destDir: string, owner: Owner): Promise<ExportedEntry[]> {
  const treeish = path === '' ? `${commitId}^{tree}` : `${commitId}:${path}`;
  const env = storeGitEnv();
  // tar.umask 022: files 0644/0755 as stored, not git's default group-writable 0664.
  const git = spawn(gitBinary, [`--git-dir=${gitdir}`, '-c', 'tar.umask=022', 'archive', '--format=tar', treeish], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // -m: the commit time is no use as mtime. The owner is the one the filter writes in, or whoever runs us.
  const ownership = owner ? ['--same-owner', '--numeric-owner'] : ['--no-same-owner'];
  const tar = spawn('tar', ['-x', '-m', ...ownership, '-C', destDir], { stdio: ['pipe', 'ignore', 'pipe'] });
  const gitDone = exited(git, gitBinary);
  const tarDone = exited(tar, 'tar');
  const filter = new TarFilter(keepEntry(path, path === ''), owner);
  try {
    await Promise.all([pipeline(git.stdout!, filter, tar.stdin!), gitDone, tarDone]);
    return filter.kept;
  } catch (e) {
    // Either side ending makes the other end too (a broken pipe, an early end of input); the
    // kill is only a safety net. Then the error that says why: git's (a missing commit or
    // folder), else tar's (a full disk), else the stream's.
    const safety = setTimeout(() => {
      git.kill('SIGKILL');
      tar.kill('SIGKILL');
    }, 5000);
    const [g, x] = await Promise.allSettled([gitDone, tarDone]);
    clearTimeout(safety);
    const gitError = g.status === 'rejected' ? (g.reason as Error) : null;
    const tarError = x.status === 'rejected' ? (x.reason as Error) : null;
    // tar exits as soon as it reads the end-of-archive blocks, while git may still be writing
    // the archive's zero padding: the pipe then closes early, but both programs succeeded and
    // every entry (all before the end marker) went through the filter.
    if (!gitError && !tarError) return filter.kept;
    if (gitError instanceof ProcessExit && /not a valid object name|not a tree object|bad revision/i.test(gitError.stderr)) {
      throw new NotFoundError(`no folder ${path || '(root)'} at commit ${commitId}`, { commitId, path });
    }
    if (gitError instanceof ProgramMissing) throw gitError;
    throw tarError ?? gitError ?? e;
  }
}

class ProcessExit extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

function exited(child: ReturnType<typeof spawn>, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.once('error', (e) => reject((e as NodeJS.ErrnoException).code === 'ENOENT' ? new ProgramMissing(`${name} not found`) : e));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new ProcessExit(`${name} exited with ${code ?? signal}: ${stderr.trim()}`, stderr));
    });
  });
}

/** The same result from the object store (no git or tar program): one tree and blob at a time. */
async function readInto(repo: Repo, commitId: string, path: string, destDir: string, owner: Owner): Promise<ExportedEntry[]> {
  let commit;
  try {
    commit = await repo.readCommit(commitId);
  } catch {
    throw new NotFoundError(`no commit ${commitId}`, { commitId });
  }
  let tree = commit.tree;
  for (const name of path === '' ? [] : path.split('/')) {
    const entry = (await repo.readTree(tree)).find((e) => e.name === name);
    if (!entry || entry.mode !== '40000') throw new NotFoundError(`no folder ${path} at commit ${commitId}`, { commitId, path });
    tree = entry.oid;
  }
  const keep = keepEntry(path, path === '');
  const written: ExportedEntry[] = [];
  const walk = async (oid: string, rel: string): Promise<void> => {
    for (const e of await repo.readTree(oid)) {
      // git's fsck refuses these names; a damaged tree must still not write outside destDir.
      if (e.name === '' || e.name === '.' || e.name === '..' || e.name.includes('/') || e.name.includes('\0')) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      const abs = join(destDir, child);
      if (e.mode === '40000') {
        if (!keep({ path: child, kind: 'dir', size: 0 })) continue;
        await mkdir(abs);
        if (owner) await chown(abs, owner.uid, owner.gid);
        written.push({ path: child, kind: 'dir', size: 0 });
        await walk(e.oid, child);
      } else if (e.mode === '160000') {
        // A submodule: an empty folder, as git archive gives it.
        if (!keep({ path: child, kind: 'dir', size: 0 })) continue;
        await mkdir(abs);
        if (owner) await chown(abs, owner.uid, owner.gid);
        written.push({ path: child, kind: 'dir', size: 0 });
      } else if (e.mode === '100644' || e.mode === '100755') {
        const bytes = await repo.readBlob(e.oid);
        if (!keep({ path: child, kind: 'file', size: bytes.length })) continue;
        await writeFile(abs, bytes, { mode: e.mode === '100755' ? 0o755 : 0o644 });
        if (owner) await chown(abs, owner.uid, owner.gid);
        written.push({ path: child, kind: 'file', size: bytes.length });
      }
    }
  };
  await walk(tree, '');
  return written;
}
