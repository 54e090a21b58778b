import { GitFailed, runGitCli } from '../git/gitCli.ts';
import type { CommitRow, IndexStore } from '../indexStore.ts';
import { Lru } from '../lru.ts';
import type { VersionInfo } from '../types.ts';
import { ValidationError } from '../../errors/contentErrors.ts';

/** Larger versions are not blamed: the answer lists every line's origin. */
export const MAX_BLAME_BYTES = 16 * 1024 * 1024;

/** Which commit last changed each line of one version: entry i is line i+1's commit id. */
export interface LineOrigins {
  origins: string[];
  /** What git said of commits the index does not know (none with --first-parent, kept as a fallback). */
  gitAuthors: Map<string, { author: string; time: number; summary: string }>;
}

/** A commit a blame answer names, as the index recorded it. */
export interface BlameCommit {
  commitId: string;
  /** The project's commit number; null for a commit the index does not know. */
  projectVersion: number | null;
  /** The blamed node's version that commit made; null when the line came from another node (copied or an older file at the path). */
  nodeVersion: number | null;
  actorType: string | null;
  actorId: string | null;
  author: string;
  commitAuthor: string | null;
  message: string;
  createdAt: string;
}

export interface BlameDeps {
  index: IndexStore;
  gitdir: (projectId: string) => string;
  /** The git program; null: blame is not available (it is git's algorithm). */
  git: string | null;
  readBlob: (projectId: string, oid: string) => Promise<Buffer>;
  /** Every this many versions of a node, its blame is kept in the index (a checkpoint); 0: never. */
  checkpointEvery: number;
}

/**
 * Line attribution for one version of a node, with git's own algorithm: `git blame
 * --first-parent` at the version's commit and path (so every line names a project version, and
 * whole-file renames, moves through the trash included, are followed). Bounded by checkpoints:
 * every `checkpointEvery`th version's blame is kept in the index (made in the background as the
 * versions are written, history/blameWarmer.ts), and a version is its latest checkpoint plus the
 * diffs of the versions since (one `git log -p`), so its cost does not grow with the history.
 * Answers are also cached in memory by commit and path, which never change; a version whose
 * previous version is cached costs one `git diff` (the dashboard asks again after each save).
 */
export class Blamer {
  /** Keyed `project:commit:path`; weighted by line count. */
  private readonly cache = new Lru<string, LineOrigins>(Infinity, 8_000_000);

  constructor(private readonly d: BlameDeps) {}

  async origins(projectId: string, v: VersionInfo): Promise<LineOrigins> {
    if (!this.d.git) throw new ValidationError('blame needs the git program, which this service was started without', { field: 'path' });
    if (!v.blobId) throw new ValidationError(`version ${v.version} of ${v.path} is a folder`, { path: v.path });
    if (v.size > MAX_BLAME_BYTES) {
      throw new ValidationError(`${v.path} is too large to blame (${v.size} bytes; at most ${MAX_BLAME_BYTES})`, { path: v.path, size: v.size });
    }
    const key = cacheKey(projectId, v);
    const hit = this.cache.get(key);
    if (hit) return hit;
    let result = this.checkpointAt(v);
    if (!result) {
      const previous = v.version > 1 ? this.d.index.version(v.nodeId, v.version - 1) : null;
      const prevHit = previous?.blobId ? this.cache.get(cacheKey(projectId, previous)) : undefined;
      if (prevHit && previous?.blobId) result = await this.advance(projectId, prevHit, previous.blobId, v);
      result ??= await this.sinceCheckpoint(projectId, v);
      result ??= await this.walk(projectId, v);
      const every = this.d.checkpointEvery;
      if (every > 0 && v.version % every === 0) this.d.index.putBlameCheckpoint(projectId, v, encodeOrigins(result.origins));
    }
    this.cache.set(key, result, result.origins.length + 16);
    return result;
  }

  /** The index's record of each commit named, with the node's version it made where it made one. */
  commits(projectId: string, nodeId: string, origins: LineOrigins): Map<string, BlameCommit> {
    const nodeVersions = this.d.index.versionCommits(nodeId);
    const out = new Map<string, BlameCommit>();
    for (const id of new Set(origins.origins)) {
      const row: CommitRow | undefined = this.d.index.commitById(projectId, id);
      const git = origins.gitAuthors.get(id);
      out.set(id, {
        commitId: id,
        projectVersion: row?.project_version ?? null,
        nodeVersion: nodeVersions.get(id) ?? null,
        actorType: row?.actor_type ?? null,
        actorId: row?.actor_id ?? null,
        author: row?.author ?? git?.author ?? '',
        commitAuthor: row?.commit_author ?? null,
        message: row?.message ?? git?.summary ?? '',
        createdAt: row?.created_at ?? new Date((git?.time ?? 0) * 1000).toISOString(),
      });
    }
    return out;
  }

  private git(projectId: string, args: string[]): Promise<Buffer> {
    return runGitCli(this.d.git!, this.d.gitdir(projectId), args);
  }

  /** The version's own checkpoint, when it has one made at this very commit and path (a purge renames commits). */
  private checkpointAt(v: VersionInfo): LineOrigins | null {
    const c = this.d.checkpointEvery > 0 ? this.d.index.blameCheckpoint(v.nodeId, v.version) : null;
    if (!c || c.version !== v.version || c.commitId !== v.commitId || c.path !== v.path) return null;
    return { origins: decodeOrigins(c.origins), gitAuthors: new Map() };
  }

  /**
   * From the latest checkpoint before `v`: the diffs of the versions since, in one `git log -p`
   * along the path. Null (the caller walks the whole history) when there is none, when it is
   * stale, or when the node changed path meanwhile (a move: git's path limit would not follow).
   */
  private async sinceCheckpoint(projectId: string, v: VersionInfo): Promise<LineOrigins | null> {
    if (this.d.checkpointEvery <= 0 || v.version < 2) return null;
    const c = this.d.index.blameCheckpoint(v.nodeId, v.version - 1);
    if (!c || this.d.index.version(v.nodeId, c.version)?.commitId !== c.commitId) return null;
    const since = this.d.index.versionsBetween(v.nodeId, c.version, v.version);
    if (since.length !== v.version - c.version || since.some((x) => x.path !== c.path || !x.blobId)) return null;
    // The versions whose content changed, oldest first: what the log must show, in its order reversed.
    const changed: string[] = [];
    let blob = this.d.index.version(v.nodeId, c.version)?.blobId;
    for (const x of since) {
      if (x.blobId !== blob) changed.push(x.commitId);
      blob = x.blobId;
    }
    let origins = decodeOrigins(c.origins);
    if (changed.length > 0) {
      const out = await this.git(projectId, ['log', '--first-parent', '-p', '-U0', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', '--format=%x01%H', v.commitId, `^${c.commitId}`, '--', c.path]);
      const blocks = out.toString('latin1').split('\x01').slice(1).reverse();
      if (blocks.length !== changed.length) return null;
      for (let i = 0; i < blocks.length; i++) {
        const block = blocks[i]!;
        const id = block.slice(0, block.indexOf('\n'));
        if (id !== changed[i]) return null;
        const next = applyLineDiff(origins, Buffer.from(block, 'latin1'), id);
        if (!next) return null;
        origins = next;
      }
    }
    if (origins.length !== countLines(await this.d.readBlob(projectId, v.blobId!))) return null;
    return { origins, gitAuthors: new Map() };
  }

  /** The whole history, by git blame (a child process: the event loop stays free). */
  private async walk(projectId: string, v: VersionInfo): Promise<LineOrigins> {
    const out = await this.git(projectId, ['blame', '--incremental', '--first-parent', v.commitId, '--', v.path]);
    return parseIncrementalBlame(out);
  }

  /** From the previous version's origins and one diff of the two blobs; null when they do not line up. */
  private async advance(projectId: string, prev: LineOrigins, prevBlob: string, v: VersionInfo): Promise<LineOrigins | null> {
    if (prevBlob === v.blobId) return prev;
    let diff: Buffer;
    try {
      diff = await this.git(projectId, ['diff', '-U0', '--no-color', '--no-ext-diff', '--no-textconv', prevBlob, v.blobId!]);
    } catch (e) {
      if (e instanceof GitFailed) return null;
      throw e;
    }
    const origins = applyLineDiff(prev.origins, diff, v.commitId);
    if (!origins || origins.length !== countLines(await this.d.readBlob(projectId, v.blobId!))) return null;
    return { origins, gitAuthors: prev.gitAuthors };
  }
}

const cacheKey = (projectId: string, v: VersionInfo) => `${projectId}:${v.commitId}:${v.path}`;

/** Origins as stored: the distinct commits, and runs of lines as [length, commit index] pairs. */
export function encodeOrigins(origins: readonly string[]): string {
  const commits: string[] = [];
  const index = new Map<string, number>();
  const runs: number[] = [];
  for (const c of origins) {
    let i = index.get(c);
    if (i === undefined) index.set(c, (i = commits.push(c) - 1));
    if (runs.length > 0 && runs[runs.length - 1] === i) runs[runs.length - 2]!++;
    else runs.push(1, i);
  }
  return JSON.stringify({ c: commits, r: runs });
}

export function decodeOrigins(stored: string): string[] {
  const { c, r } = JSON.parse(stored) as { c: string[]; r: number[] };
  const out: string[] = [];
  for (let k = 0; k < r.length; k += 2) for (let n = 0; n < r[k]!; n++) out.push(c[r[k + 1]!]!);
  return out;
}

/** Lines as git counts them: a last line without a newline counts; an empty blob has none. */
export function countLines(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) n++;
  return bytes[bytes.length - 1] === 0x0a ? n : n + 1;
}

const GROUP = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) \d+ (\d+) (\d+)$/;

/** `git blame --incremental`: a header `<commit> <orig line> <final line> <count>` per group of lines, then that commit's details the first time it appears. */
export function parseIncrementalBlame(out: Buffer): LineOrigins {
  const origins: string[] = [];
  const gitAuthors = new Map<string, { author: string; time: number; summary: string }>();
  let current: { author: string; time: number; summary: string } | null = null;
  for (const line of out.toString('utf8').split('\n')) {
    const m = GROUP.exec(line);
    if (m) {
      const [, id, final, count] = m;
      for (let i = 0; i < Number(count); i++) origins[Number(final) - 1 + i] = id!;
      if (!gitAuthors.has(id!)) gitAuthors.set(id!, (current = { author: '', time: 0, summary: '' }));
      else current = null;
      continue;
    }
    if (!current) continue;
    if (line.startsWith('author ')) current.author = line.slice(7);
    else if (line.startsWith('author-time ')) current.time = Number(line.slice(12));
    else if (line.startsWith('summary ')) current.summary = line.slice(8);
  }
  for (let i = 0; i < origins.length; i++) if (origins[i] === undefined) throw new GitFailed(`git blame left line ${i + 1} without a commit`);
  return { origins, gitAuthors };
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The next version's origins: lines the zero-context diff adds are `commit`'s, the others keep theirs. */
export function applyLineDiff(prev: readonly string[], diff: Buffer, commit: string): string[] | null {
  const next: string[] = [];
  let oldPos = 1;
  for (const line of diff.toString('latin1').split('\n')) {
    const m = HUNK.exec(line);
    if (!m) continue;
    const oldStart = Number(m[1]);
    const oldCount = m[2] === undefined ? 1 : Number(m[2]);
    const newCount = m[4] === undefined ? 1 : Number(m[4]);
    // A pure insertion (`-a,0`) comes after old line a; otherwise the hunk starts at old line a.
    const from = oldCount === 0 ? oldStart + 1 : oldStart;
    if (from < oldPos) return null;
    for (; oldPos < from; oldPos++) next.push(prev[oldPos - 1]!);
    oldPos += oldCount;
    for (let i = 0; i < newCount; i++) next.push(commit);
  }
  if (oldPos - 1 > prev.length) return null;
  for (; oldPos <= prev.length; oldPos++) next.push(prev[oldPos - 1]!);
  return next;
}
