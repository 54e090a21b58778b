import { parseCommit } from '../git/commitObject.ts';
import { GitFailed, parseCatFileBatch, runGitCli } from '../git/gitCli.ts';
import { TRASH_DIR, typeFromName } from '../paths.ts';
import type { ChainCommit, History, ReconcileDeps } from './historyReader.ts';
import { contentKind, fileInfo, GIT_TREE_MODE, planFromChanges, type ContentKind, type DiffPlan, type FileInfo, type RawChange, type TypeAt } from './treeDiff.ts';

/** In bulk through the system git: a handful of processes per CHUNK commits. */
export class GitHistory implements History {
  constructor(
    private readonly deps: ReconcileDeps,
    private readonly binary: string,
  ) {}

  private git(args: string[], input?: string): Promise<Buffer> {
    return runGitCli(this.binary, this.deps.repo.gitdir, args, input);
  }

  async chain(tip: string | null, stop: string | null): Promise<{ ids: string[]; reached: boolean }> {
    if (!tip) return { ids: [], reached: stop === null };
    const out = await this.git(['rev-list', '--first-parent', '--reverse', '--parents', tip, ...(stop ? [`^${stop}`] : []), '--']);
    const ids: string[] = [];
    let firstParent: string | null = null;
    for (const line of out.toString('latin1').split('\n')) {
      if (line === '') continue;
      const [id, parent] = line.split(' ');
      if (ids.length === 0) firstParent = parent ?? null;
      ids.push(id!);
    }
    return { ids, reached: stop === null || (ids.length > 0 && firstParent === stop) };
  }

  async commits(ids: string[]): Promise<ChainCommit[]> {
    if (ids.length === 0) return [];
    const objects = parseCatFileBatch(await this.git(['cat-file', '--batch'], ids.join('\n') + '\n'));
    return ids.map((id) => {
      const o = objects.get(id);
      if (!o || o.type !== 'commit') throw new GitFailed(`commit ${id} could not be read`);
      return { id, commit: parseCommit(Buffer.from(o.content)) };
    });
  }

  async plans(commits: ChainCommit[], typeAt: TypeAt): Promise<Map<string, DiffPlan>> {
    const plans = new Map<string, DiffPlan>();
    if (commits.length === 0) return plans;
    const input = commits.map((c) => (c.commit.parents[0] ? `${c.id} ${c.commit.parents[0]}` : c.id)).join('\n') + '\n';
    const raw = await this.git(['diff-tree', '--stdin', '-r', '-t', '-z', '--raw', '--no-renames', '--root'], input);
    const byCommit = parseDiffTree(raw);
    // Sizes of every blob the commits add or change, and whether `.json` ones parse as documents.
    const blobs = new Set<string>();
    const checked = new Set<string>();
    for (const changes of byCommit.values()) {
      for (const c of changes) {
        if (c.newMode === '000000' || c.newMode === GIT_TREE_MODE) continue;
        blobs.add(c.newOid);
        const now = typeAt(c.path);
        if (typeFromName(c.path) === 'json' || now === 'json' || now === 'markdown') checked.add(c.newOid);
      }
    }
    const [sizes, kinds] = await Promise.all([this.sizes([...blobs]), this.contentKinds([...checked])]);
    const info = (p: string, oid: string): FileInfo => {
      const size = sizes.get(oid);
      if (size === undefined) throw new GitFailed(`blob ${oid} could not be read`);
      const kind = kinds.get(oid);
      const named = typeFromName(p);
      // Blobs not read are neither at a json/markdown node nor named .json: only their name matters.
      return fileInfo(p, oid, size, kind ?? { json: false, text: named === 'markdown' });
    };
    for (const c of commits) plans.set(c.id, await planFromChanges(byCommit.get(c.id) ?? [], info));
    return plans;
  }

  private async sizes(oids: string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    if (oids.length === 0) return sizes;
    const out = await this.git(['cat-file', '--batch-check=%(objectname) %(objectsize)'], oids.join('\n') + '\n');
    for (const line of out.toString('latin1').split('\n')) {
      const [oid, size] = line.split(' ');
      if (oid && size && /^\d+$/.test(size)) sizes.set(oid, Number(size));
    }
    return sizes;
  }

  /** What each blob's content can be served as (read in rounds of 64). */
  private async contentKinds(oids: string[]): Promise<Map<string, ContentKind>> {
    const kinds = new Map<string, ContentKind>();
    for (let i = 0; i < oids.length; i += 64) {
      const round = oids.slice(i, i + 64);
      const objects = parseCatFileBatch(await this.git(['cat-file', '--batch'], round.join('\n') + '\n'));
      for (const [oid, o] of objects) kinds.set(oid, contentKind(Buffer.from(o.content)));
    }
    return kinds;
  }

  async refreshFolderHashes(rootTree: string): Promise<void> {
    const { index, projectId } = this.deps;
    const out = await this.git(['ls-tree', '-r', '-d', '-z', '--full-tree', rootTree]);
    const updates: [string, string][] = [];
    // Pre-order listing: a folder whose hash is already right has an unchanged subtree, skip it.
    let skip: string | null = null;
    for (const entry of out.toString('utf8').split('\0')) {
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      const path = entry.slice(tab + 1);
      const oid = entry.slice(0, tab).split(' ')[2]!;
      if (skip !== null && path.startsWith(skip)) continue;
      skip = null;
      if (path === TRASH_DIR) continue;
      const row = index.rowAt(projectId, path, true);
      if (!row || row.content_hash === oid) {
        skip = path + '/';
        continue;
      }
      updates.push([path, oid]);
    }
    if (updates.length === 0) return;
    this.deps.db.transaction(() => {
      for (const [p, oid] of updates) index.setFolderHash(projectId, p, oid);
    }).immediate();
  }
}

function parseDiffTree(buf: Buffer): Map<string, RawChange[]> {
  const out = new Map<string, RawChange[]>();
  let current: RawChange[] | null = null;
  let start = 0;
  const next = (): string | null => {
    if (start >= buf.length) return null;
    let end = buf.indexOf(0, start);
    if (end < 0) end = buf.length;
    const s = buf.toString('utf8', start, end);
    start = end + 1;
    return s;
  };
  for (let t = next(); t !== null; t = next()) {
    if (t.startsWith(':')) {
      const [oldMode, newMode, oldOid, newOid] = t.slice(1).split(' ');
      const path = next() ?? '';
      current?.push({ oldMode: oldMode!, newMode: newMode!, oldOid: oldOid!, newOid: newOid!, path });
    } else if (t.trim() !== '') {
      current = [];
      out.set(t.trim(), current);
    }
  }
  return out;
}
