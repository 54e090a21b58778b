import { spawn } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TRASH_DIR } from '../paths.ts';
import { storeGitEnv } from './gitCli.ts';
import { keepEntry } from './exportTree.ts';
import { TarFilter } from './tarFilter.ts';

/**
 * The tree `treeOid` as a tar stream, as an export writes it (no `.cnskeep`, no `.trash` when
 * `atRoot`, regular files and folders only): `git archive` spawned and filtered in-process, so
 * the event loop only moves bytes and nothing is held beyond the pipes' buffers. A reader that
 * goes away (destroys the stream) ends git too. A git failure ends the stream with its error.
 */
export function archiveTarStream(gitdir: string, gitBinary: string, treeOid: string, atRoot: boolean): Readable {
  return archiveStream(gitdir, gitBinary, treeOid, atRoot, 'tar');
}

/**
 * The tree `treeOid` as a zip written by `git archive` itself (deflate level 1): C speed, no
 * per-entry work in JS (the JS zip writers cost ~1 ms per entry: 10 s for 10,000 files). Folders
 * are entries; an empty folder holds its empty `.cnskeep` marker (git keeps no empty trees; an
 * import reads the marker back as the empty folder); `.trash` is left out at the root.
 */
export function archiveZipStream(gitdir: string, gitBinary: string, treeOid: string, atRoot: boolean): Readable {
  return archiveStream(gitdir, gitBinary, treeOid, atRoot, 'zip');
}

function archiveStream(gitdir: string, gitBinary: string, treeOid: string, atRoot: boolean, format: 'tar' | 'zip'): Readable {
  // zlib's state is allocated and freed per entry; without a top pad glibc gives the heap back each
  // time (two brk calls per file): half of a 10,000-file zip's time went there (docs/benchmarks.md).
  const env: NodeJS.ProcessEnv = { ...storeGitEnv(), MALLOC_TOP_PAD_: String(16 << 20) };
  const args = format === 'tar' ? ['--format=tar', treeOid] : ['--format=zip', '-1', treeOid, ...(atRoot ? ['--', '.', `:(exclude)${TRASH_DIR}`] : [])];
  const git = spawn(gitBinary, [`--git-dir=${gitdir}`, '-c', 'tar.umask=022', 'archive', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  git.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 4096) stderr += c.toString();
  });
  const exited = new Promise<void>((resolve, reject) => {
    git.once('error', reject);
    git.once('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`git archive exited with ${code ?? signal}: ${stderr.trim()}`))));
  });
  const out = new PassThrough();
  const stages = format === 'tar' ? [git.stdout!, new TarFilter(keepEntry('', atRoot)), out] : [git.stdout!, out];
  Promise.all([pipeline(stages), exited]).catch((e: unknown) => {
    if (!out.destroyed) out.destroy(e as Error);
  });
  out.once('close', () => {
    if (git.exitCode === null && git.signalCode === null) git.kill('SIGKILL');
  });
  return out;
}
