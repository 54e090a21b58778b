import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { CommitApplier } from './commitApplier.ts';
import { isJsonDocument } from './encoding.ts';
import { parseCommit, type CommitData } from './git/commitObject.ts';
import { GitFailed, GitMissing, parseCatFileBatch, runGitCli } from './git/gitCli.ts';
import type { Repo, TreeEntryRaw } from './git/repo.ts';
import type { IndexStore, NodeRow, VersionRow } from './indexStore.ts';
import { newNodeId } from './mutations.ts';
import { isTrashPath, joinPath, parentPath, PLACEHOLDER, TRASH_DIR, typeFromName } from './paths.ts';
import type { ExpectedPush, PushExpectations } from './pushExpectations.ts';
import { TREE_MODE } from './tree.ts';
import { formatNote, parseMessage, parseNote, type NodeChange, type ParsedMessage, type ParsedNote } from './trailers.ts';
import { Notes } from './git/notes.ts';
import type { Actor, NodeType, ReindexReport, SyncOptions, SyncReport } from './types.ts';

export interface SyncDeps {
  projectId: string;
  db: Db;
  index: IndexStore;
  repo: Repo;
  logger?: Logger;
  /** The system git, used to read history in bulk; null or absent: isomorphic-git only. */
  gitBinary?: string | null;
  /** Called when `gitBinary` turns out not to be installed (then isomorphic-git is used). */
  onGitMissing?: () => void;
  /** Pushes accepted by the git remote: their commits get the pusher as actor. */
  pushes?: PushExpectations;
}

interface ChainCommit {
  id: string;
  commit: CommitData;
}

/** Commits applied per SQLite transaction while replaying. */
const GROUP = 500;
/** Commits read from git per round (one rev-list for the chain, then per round one cat-file and one diff-tree). */
const CHUNK = 2000;

/**
 * Indexes the commits on `main` after the last indexed one. Follows first parents back from the
 * tip; if the last indexed commit is not among them (history rewritten) the project is rebuilt.
 * Commits of a push registered with `pushes` are indexed with that push's actor, time and author
 * and the push is recorded in the audit log; other commits without trailers take `options`.
 * Must run under the project's write lock.
 */
export async function syncFromGit(deps: SyncDeps, options: SyncOptions = {}): Promise<SyncReport> {
  return withHistory(deps, async (history) => {
    const { index, repo, projectId } = deps;
    const tip = repo.readMain();
    const st = index.indexState(projectId);
    const last = st?.headCommit ?? null;
    if (tip === last) return { projectId, indexedCommits: 0, rebuilt: false, head: tip };
    const { ids, reached } = await history.chain(tip, last);
    if (!reached) {
      deps.logger?.warn({ projectId, last, tip }, 'main no longer contains the last indexed commit: rebuilding the index');
      deps.db.transaction(() => index.clearProject(projectId)).immediate();
      const full = await history.chain(tip, null);
      await replay(deps, history, full.ids, 0, options);
      return { projectId, indexedCommits: full.ids.length, rebuilt: true, head: tip };
    }
    await replay(deps, history, ids, st?.projectVersion ?? 0, options);
    return { projectId, indexedCommits: ids.length, rebuilt: false, head: tip };
  });
}

/** Rebuilds a project's index from git alone and reports how it differs from the one before. */
export async function rebuildIndex(deps: SyncDeps, options: SyncOptions = {}): Promise<ReindexReport> {
  const { index, repo, projectId } = deps;
  const before = snapshot(index, projectId);
  const commits = await withHistory(deps, async (history) => {
    deps.db.transaction(() => index.clearProject(projectId)).immediate();
    const { ids } = await history.chain(repo.readMain(), null);
    await replay(deps, history, ids, 0, options);
    return ids.length;
  });
  const after = snapshot(index, projectId);
  return { projectId, commits, nodes: after.nodes.size, versions: after.versionCount, ...compare(before, after) };
}

/**
 * Runs `work` reading history with the system git, or with isomorphic-git when there is no git
 * (or it failed: `work` then runs again from the index state it left, which is consistent).
 */
async function withHistory<T>(deps: SyncDeps, work: (h: History) => Promise<T>): Promise<T> {
  if (deps.gitBinary) {
    try {
      return await work(new GitHistory(deps, deps.gitBinary));
    } catch (e) {
      if (e instanceof GitMissing) deps.onGitMissing?.();
      else if (e instanceof GitFailed) deps.logger?.warn({ err: e, projectId: deps.projectId }, 'reading history with git failed: using isomorphic-git');
      else throw e;
    }
  }
  return work(new IsoHistory(deps));
}

async function replay(deps: SyncDeps, history: History, ids: string[], startPv: number, options: SyncOptions): Promise<void> {
  const { db, index, projectId } = deps;
  let pv = startPv;
  const sinceRepack = index.indexState(projectId)?.commitsSinceRepack ?? 0;
  const pushes = pushSegments(deps, ids);
  const notes = new Notes(deps.repo);
  let lastTree: string | null = null;
  for (let start = 0; start < ids.length; start += CHUNK) {
    const commits = await history.commits(ids.slice(start, start + CHUNK));
    const parsed = commits.map((c) => parseMessage(c.commit.message));
    // Commits without trailers: indexed as their note says (exact rebuild), else planned from
    // their diff and then noted, in git before the index commits.
    const untrailered = commits.filter((_, k) => !parsed[k]).map((c) => c.id);
    const draft = await notes.prepare(untrailered);
    const noted = new Map<string, ParsedNote>();
    for (const id of untrailered) {
      const oid = draft.lookup(id);
      const note = oid ? parseNote((await deps.repo.readBlob(oid)).toString('utf8')) : null;
      if (note) noted.set(id, note);
    }
    const plans = await history.plans(commits.filter((c, k) => !parsed[k] && !noted.has(c.id)), (p) => index.rowAt(projectId, p, false)?.type);
    for (let g = 0; g < commits.length; g += GROUP) {
      const group = commits.slice(g, g + GROUP);
      // Folder ids by path, valid while commits change no folders (reset by applyPlan otherwise).
      const folderIds = new Map<string, string | null>();
      db.transaction(() => {
        group.forEach((c, k) => {
          const p: ParsedMessage | null = parsed[g + k]!;
          const note = noted.get(c.id);
          const push = pushes[start + g + k];
          const message = c.commit.message.trim();
          if (p || note) {
            const meta = p ? { actor: p.actor, message: p.message, time: isoTime(c.commit.time) } : { actor: note!.actor, message, time: note!.time };
            const applier = new CommitApplier(index, { projectId, projectVersion: ++pv, ...meta });
            folderIds.clear();
            for (const change of (p ?? note!).changes) applier.apply(change);
            applier.finalize(c.id);
            // A rebuild keeps the push rows it finds (they are not node rows): add only missing ones.
            if (note?.push && !pushRecorded(deps.db, projectId, note.push.after)) {
              index.insertAudit(projectId, '', '', 'push', note.actor, { ref: 'refs/heads/main', ...note.push }, note.time);
            }
            if (push && push.after === c.id) deps.pushes?.forget(projectId, push.after);
            return;
          }
          const who = attribution(c.commit, push, options);
          const applier = new CommitApplier(index, { projectId, projectVersion: ++pv, message, ...who });
          applyPlan(index, projectId, applier, plans.get(c.id)!, folderIds);
          applier.finalize(c.id);
          const pushRecord = push && push.after === c.id ? { before: push.before, after: push.after, commits: push.commits } : null;
          if (pushRecord) {
            index.insertAudit(projectId, '', '', 'push', push!.actor, { ref: 'refs/heads/main', ...pushRecord }, push!.receivedAt);
            // Consumed with its versions and audit row, all or nothing (the row survives a crash).
            deps.pushes?.forget(projectId, pushRecord.after);
          }
          draft.add(c.id, formatNote({ actor: who.actor, time: who.time, push: pushRecord, changes: applier.changes() }));
        });
        index.setIndexState(projectId, { headCommit: group[group.length - 1]!.id, projectVersion: pv, commitsSinceRepack: sinceRepack + pv - startPv });
        // The notes reach git before the index commits: a crash in between re-indexes from them.
        draft.commit();
      }).immediate();
    }
    lastTree = commits[commits.length - 1]!.commit.tree;
  }
  if (lastTree) await history.refreshFolderHashes(lastTree);
}

function pushRecorded(db: Db, projectId: string, after: string): boolean {
  const row = db
    .prepare(`SELECT 1 FROM content_audit_log WHERE project_id = ? AND path = '' AND action = 'push' AND json_extract(details, '$.after') = ? LIMIT 1`)
    .get(projectId, after);
  return row !== undefined;
}

/** For each commit of the chain, the registered push that brought it (if any). */
function pushSegments(deps: SyncDeps, ids: string[]): (ExpectedPush | undefined)[] {
  const out: (ExpectedPush | undefined)[] = new Array(ids.length);
  const pending = deps.pushes?.pending(deps.projectId) ?? [];
  if (pending.length === 0) return out;
  const pos = new Map(ids.map((id, i) => [id, i] as const));
  for (const p of pending) {
    const end = pos.get(p.after);
    if (end === undefined) continue;
    const b = p.before ? pos.get(p.before) : undefined;
    for (let i = b === undefined ? 0 : b + 1; i <= end; i++) out[i] ??= p;
  }
  return out;
}

/** Actor and time of a commit without trailers. */
function attribution(c: CommitData, push: ExpectedPush | undefined, o: SyncOptions): { actor: Actor; time: string } {
  const commitAuthor = c.authorEmail || c.authorName;
  const base = push?.actor ?? o.actor;
  const keep = push ? push.keepCommitAuthor : o.keepCommitAuthor === true;
  const actor: Actor = base ? (keep ? { ...base, author: commitAuthor } : base) : { type: 'user', id: commitAuthor, author: commitAuthor };
  const at = push?.receivedAt ?? o.receivedAt;
  return { actor, time: at ?? isoTime(c.time) };
}

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

// ------------------------------------------------------------ reading history

/** Where replay reads history from. */
interface History {
  /** First-parent chain from `tip` back to `stop` (exclusive), oldest first; `reached`: stop was met. */
  chain(tip: string | null, stop: string | null): Promise<{ ids: string[]; reached: boolean }>;
  commits(ids: string[]): Promise<ChainCommit[]>;
  /**
   * Plans of commits without trailers (diffs against their first parent), by commit id.
   * `typeAt(path)`: the type of the file indexed at a path now (its new content is checked
   * against it, so that a json or markdown node keeps its type while the content fits).
   */
  plans(commits: ChainCommit[], typeAt: TypeAt): Promise<Map<string, DiffPlan>>;
  /** Sets folder content hashes (tree ids) from the final tree. */
  refreshFolderHashes(rootTree: string): Promise<void>;
}

/** Object by object through the store's own reader (isomorphic-git for packed objects). */
class IsoHistory implements History {
  private readonly seen = new Map<string, CommitData>();
  private readonly trees = new Map<string, string>();
  private lastId: string | null = null;

  constructor(private readonly deps: SyncDeps) {}

  private async read(id: string): Promise<CommitData> {
    let c = this.seen.get(id);
    if (!c) {
      c = await this.deps.repo.readCommit(id);
      this.seen.set(id, c);
    }
    return c;
  }

  async chain(tip: string | null, stop: string | null): Promise<{ ids: string[]; reached: boolean }> {
    const ids: string[] = [];
    let c = tip;
    while (c && c !== stop) {
      ids.push(c);
      c = (await this.read(c)).parents[0] ?? null;
    }
    return { ids: ids.reverse(), reached: c === stop };
  }

  async commits(ids: string[]): Promise<ChainCommit[]> {
    // Trees of this round's commits (and of the one before it): the parents plans() diffs against.
    const prev = this.lastId ? this.trees.get(this.lastId) : undefined;
    this.trees.clear();
    if (this.lastId && prev) this.trees.set(this.lastId, prev);
    const out: ChainCommit[] = [];
    for (const id of ids) {
      const commit = await this.read(id);
      out.push({ id, commit });
      this.seen.delete(id);
      this.trees.set(id, commit.tree);
      this.lastId = id;
    }
    return out;
  }

  async plans(commits: ChainCommit[]): Promise<Map<string, DiffPlan>> {
    const plans = new Map<string, DiffPlan>();
    for (const c of commits) {
      const parent = c.commit.parents[0];
      const from = parent ? (this.trees.get(parent) ?? (await this.deps.repo.readCommit(parent)).tree) : null;
      plans.set(c.id, await planDiff(this.deps.repo, from, c.commit.tree));
    }
    return plans;
  }

  refreshFolderHashes(rootTree: string): Promise<void> {
    return refreshFolderHashes(this.deps, rootTree);
  }
}

/** In bulk through the system git: a handful of processes per CHUNK commits. */
class GitHistory implements History {
  constructor(
    private readonly deps: SyncDeps,
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

/** Mode of trees in `git diff-tree` and `git ls-tree` output. */
const GIT_TREE_MODE = '040000';

/** One line of `git diff-tree -r -t --raw`. */
interface RawChange {
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: string;
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

// ------------------------------------------------------------ commits without trailers

interface FileInfo {
  oid: string;
  size: number;
  /** The type its name and content give it (json only when the content is a JSON document). */
  type: Exclude<NodeType, 'folder'>;
  /** What the content can be served as: a node of that type keeps it. */
  json: boolean;
  text: boolean;
}

interface ContentKind {
  json: boolean;
  text: boolean;
}

type TypeAt = (path: string) => NodeType | undefined;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function contentKind(bytes: Buffer): ContentKind {
  let text = true;
  try {
    utf8.decode(bytes);
  } catch {
    text = false;
  }
  return { json: text && isJsonDocument(bytes), text };
}

function fileInfo(path: string, oid: string, size: number, kind: ContentKind): FileInfo {
  let type = typeFromName(path);
  if (type === 'json' && !kind.json) type = 'file';
  return { oid, size, type, json: kind.json, text: kind.text };
}

/** A node keeps its type while the new content fits it; otherwise name and content decide. */
function keptType(row: NodeRow | undefined, f: FileInfo): Exclude<NodeType, 'folder'> {
  if (!row || row.type === 'folder') return f.type;
  if (row.type === 'json') return f.json ? 'json' : f.type;
  if (row.type === 'markdown') return f.text ? 'markdown' : f.type === 'markdown' ? 'file' : f.type;
  return row.type;
}

interface DiffPlan {
  addedFolders: string[];
  removedFolders: string[];
  folderMoves: { from: string; to: string }[];
  fileMoves: { from: string; to: string }[];
  added: Map<string, FileInfo>;
  removed: Set<string>;
  modified: Map<string, FileInfo>;
}

interface TreeChange {
  path: string;
  oid: string;
}

/** Compares two trees (reading only subtrees whose ids differ) and pairs up renames by object id. */
async function planDiff(repo: Repo, from: string | null, to: string | null): Promise<DiffPlan> {
  const removedTrees: TreeChange[] = [];
  const addedTrees: TreeChange[] = [];
  const removedFiles = new Map<string, string>();
  const addedFiles = new Map<string, string>();
  const modifiedFiles = new Map<string, string>();
  const entries = async (oid: string | null) => new Map((oid ? await repo.readTree(oid) : []).map((e) => [e.name, e] as const));

  const walk = async (a: string | null, b: string | null, path: string): Promise<void> => {
    const ea = await entries(a);
    const eb = await entries(b);
    for (const name of new Set([...ea.keys(), ...eb.keys()])) {
      if (name === PLACEHOLDER) continue;
      const x = ea.get(name);
      const y = eb.get(name);
      if (x && y && x.oid === y.oid && x.mode === y.mode) continue;
      const p = joinPath(path, name);
      const xt = x?.mode === TREE_MODE;
      const yt = y?.mode === TREE_MODE;
      if (p === TRASH_DIR || (xt && yt)) {
        await walk(xt ? x!.oid : null, yt ? y!.oid : null, p);
        continue;
      }
      if (x && y && !xt && !yt) {
        modifiedFiles.set(p, y.oid);
        continue;
      }
      if (x) (xt ? removedTrees.push({ path: p, oid: x.oid }) : removedFiles.set(p, x.oid));
      if (y) (yt ? addedTrees.push({ path: p, oid: y.oid }) : addedFiles.set(p, y.oid));
    }
  };
  await walk(from, to, '');

  const expand = async (t: TreeChange, folders: string[], files: Map<string, string>) => {
    const rec = async (oid: string, path: string) => {
      folders.push(path);
      for (const e of await repo.readTree(oid)) {
        if (e.name === PLACEHOLDER) continue;
        const p = joinPath(path, e.name);
        if (e.mode === TREE_MODE) await rec(e.oid, p);
        else files.set(p, e.oid);
      }
    };
    await rec(t.oid, t.path);
  };
  const info = async (p: string, oid: string): Promise<FileInfo> => {
    const bytes = await repo.readBlob(oid);
    return fileInfo(p, oid, bytes.length, contentKind(bytes));
  };
  return finishPlan({ removedTrees, addedTrees, removedFiles, addedFiles, modifiedFiles }, expand, info);
}

/** A tree added or removed as a whole, with everything beneath it (from a recursive diff). */
interface Region extends TreeChange {
  folders: string[];
  files: Map<string, string>;
}

/**
 * The same plan as planDiff, from the lines of `git diff-tree -r -t` (trees are listed before
 * their contents, in tree order): changes below a tree added or removed as a whole belong to it.
 */
function planFromChanges(changes: RawChange[], info: (p: string, oid: string) => FileInfo): Promise<DiffPlan> {
  const removedTrees: Region[] = [];
  const addedTrees: Region[] = [];
  const removedFiles = new Map<string, string>();
  const addedFiles = new Map<string, string>();
  const modifiedFiles = new Map<string, string>();
  const removedIn = new Map<string, Region>();
  const addedIn = new Map<string, Region>();
  const side = (path: string, mode: string, oid: string, regions: Map<string, Region>, roots: Region[], files: Map<string, string>) => {
    const inside = regions.get(parentPath(path));
    if (mode === GIT_TREE_MODE) {
      const region = inside ?? { path, oid, folders: [], files: new Map<string, string>() };
      if (!inside) roots.push(region);
      region.folders.push(path);
      regions.set(path, region);
    } else if (inside) inside.files.set(path, oid);
    else files.set(path, oid);
  };
  for (const c of changes) {
    if (c.path === TRASH_DIR || `/${c.path}/`.includes(`/${PLACEHOLDER}/`)) continue;
    const hasOld = c.oldMode !== '000000';
    const hasNew = c.newMode !== '000000';
    const oldTree = c.oldMode === GIT_TREE_MODE;
    const newTree = c.newMode === GIT_TREE_MODE;
    if (oldTree && newTree) continue;
    if (hasOld && hasNew && !oldTree && !newTree) {
      if (c.oldOid !== c.newOid || c.oldMode !== c.newMode) modifiedFiles.set(c.path, c.newOid);
      continue;
    }
    if (hasOld) side(c.path, c.oldMode, c.oldOid, removedIn, removedTrees, removedFiles);
    if (hasNew) side(c.path, c.newMode, c.newOid, addedIn, addedTrees, addedFiles);
  }
  const expand = (t: TreeChange, folders: string[], files: Map<string, string>) => {
    const r = t as Region;
    folders.push(...r.folders);
    for (const [p, oid] of r.files) files.set(p, oid);
  };
  return finishPlan({ removedTrees, addedTrees, removedFiles, addedFiles, modifiedFiles }, expand, info);
}

/** Pairs folder moves by tree id, then file moves by blob id; the rest are additions and removals. */
async function finishPlan(
  d: {
    removedTrees: TreeChange[];
    addedTrees: TreeChange[];
    removedFiles: Map<string, string>;
    addedFiles: Map<string, string>;
    modifiedFiles: Map<string, string>;
  },
  expand: (t: TreeChange, folders: string[], files: Map<string, string>) => Promise<void> | void,
  info: (p: string, oid: string) => Promise<FileInfo> | FileInfo,
): Promise<DiffPlan> {
  const { addedFiles, removedFiles, modifiedFiles } = d;
  const plan: DiffPlan = {
    addedFolders: [],
    removedFolders: [],
    folderMoves: [],
    fileMoves: [],
    added: new Map(),
    removed: new Set(),
    modified: new Map(),
  };
  const unmatchedRemoved = [...d.removedTrees];
  for (const t of d.addedTrees) {
    const k = unmatchedRemoved.findIndex((r) => r.oid === t.oid);
    if (k >= 0) {
      plan.folderMoves.push({ from: unmatchedRemoved[k]!.path, to: t.path });
      unmatchedRemoved.splice(k, 1);
    } else {
      await expand(t, plan.addedFolders, addedFiles);
    }
  }
  for (const r of unmatchedRemoved) await expand(r, plan.removedFolders, removedFiles);

  const addedByOid = new Map<string, string[]>();
  for (const [p, oid] of addedFiles) addedByOid.set(oid, [...(addedByOid.get(oid) ?? []), p]);
  for (const [p, oid] of removedFiles) {
    const candidates = addedByOid.get(oid);
    if (candidates && candidates.length > 0) {
      const to = candidates.shift()!;
      plan.fileMoves.push({ from: p, to });
      addedFiles.delete(to);
    } else {
      plan.removed.add(p);
    }
  }
  for (const [p, oid] of addedFiles) plan.added.set(p, await info(p, oid));
  for (const [p, oid] of modifiedFiles) plan.modified.set(p, await info(p, oid));
  const depth = (p: string) => p.split('/').length;
  plan.addedFolders.sort((a, b) => depth(a) - depth(b));
  plan.removedFolders.sort((a, b) => depth(a) - depth(b));
  return plan;
}

function applyPlan(index: IndexStore, projectId: string, applier: CommitApplier, plan: DiffPlan, folderIds = new Map<string, string | null>()): void {
  const folderAt = (p: string) => index.rowAt(projectId, p, true);
  const fileAt = (p: string) => index.rowAt(projectId, p, false);
  const changesFolders = plan.addedFolders.length > 0 || plan.removedFolders.length > 0 || plan.folderMoves.length > 0;
  if (changesFolders) folderIds.clear();
  const parentOf = (p: string): string | null => {
    const dir = parentPath(p);
    if (dir === '' || dir === TRASH_DIR) return null;
    if (changesFolders) return folderAt(dir)?.id ?? null;
    let id = folderIds.get(dir);
    if (id === undefined) folderIds.set(dir, (id = folderAt(dir)?.id ?? null));
    return id;
  };
  const moveOp = (from: string, to: string): NodeChange['op'] =>
    isTrashPath(to) && !isTrashPath(from) ? 'trash' : isTrashPath(from) && !isTrashPath(to) ? 'restore' : 'move';
  const relocate = (row: NodeRow | undefined, from: string, to: string) => {
    if (!row) return;
    applier.apply({
      id: row.id,
      type: row.type,
      op: moveOp(from, to),
      parentId: parentOf(to),
      path: to,
      blobId: row.type === 'folder' ? null : row.content_hash,
      size: row.size,
      fromPath: from,
    });
  };
  for (const p of plan.addedFolders) {
    if (!folderAt(p)) applier.apply({ id: newNodeId(), type: 'folder', op: 'create', parentId: parentOf(p), path: p, blobId: null, size: 0 });
  }
  for (const m of plan.folderMoves) relocate(folderAt(m.from), m.from, m.to);
  for (const m of plan.fileMoves) relocate(fileAt(m.from), m.from, m.to);
  for (const p of plan.removed) {
    const row = fileAt(p);
    if (row) applier.apply({ id: row.id, type: row.type, op: 'delete', parentId: row.parent_id, path: p, blobId: row.content_hash, size: row.size });
  }
  for (const p of plan.removedFolders) {
    const row = folderAt(p);
    if (row) applier.apply({ id: row.id, type: 'folder', op: 'delete', parentId: row.parent_id, path: p, blobId: null, size: 0 });
  }
  for (const [p, f] of [...plan.added, ...plan.modified]) {
    const row = fileAt(p);
    if (row && row.content_hash === f.oid) continue;
    const type = keptType(row, f);
    applier.apply({ id: row?.id ?? newNodeId(), type, op: row ? 'update' : 'create', parentId: parentOf(p), path: p, blobId: f.oid, size: f.size }, row ?? null);
  }
}

/** Sets folder content hashes (tree ids) from a tree, skipping subtrees whose id is already right. */
async function refreshFolderHashes(deps: SyncDeps, rootTree: string): Promise<void> {
  const updates: [string, string][] = [];
  const walk = async (entries: TreeEntryRaw[], path: string) => {
    for (const e of entries) {
      if (e.mode !== TREE_MODE) continue;
      const p = joinPath(path, e.name);
      if (p !== TRASH_DIR) {
        const row = deps.index.rowAt(deps.projectId, p, true);
        if (!row || row.content_hash === e.oid) continue;
        updates.push([p, e.oid]);
      }
      await walk(await deps.repo.readTree(e.oid), p);
    }
  };
  await walk(await deps.repo.readTree(rootTree), '');
  if (updates.length === 0) return;
  deps.db.transaction(() => {
    for (const [p, oid] of updates) deps.index.setFolderHash(deps.projectId, p, oid);
  }).immediate();
}

// ------------------------------------------------------------ comparing indexes

interface Snapshot {
  nodes: Map<string, NodeRow>;
  versions: Map<string, VersionRow[]>;
  versionCount: number;
}

function snapshot(index: IndexStore, projectId: string): Snapshot {
  const nodes = new Map(index.allNodes(projectId).map((n) => [n.id, n] as const));
  const versions = new Map<string, VersionRow[]>();
  let versionCount = 0;
  for (const v of index.allVersions(projectId)) {
    versions.set(v.node_id, [...(versions.get(v.node_id) ?? []), v]);
    versionCount++;
  }
  return { nodes, versions, versionCount };
}

const NODE_FIELDS = ['path', 'parent_id', 'type', 'name', 'content_hash', 'size', 'state', 'version', 'original_path', 'deleted_at', 'deleted_by', 'created_at'] as const;
const VERSION_FIELDS = ['commit_id', 'project_version', 'blob_id', 'type', 'path', 'parent_id', 'operation', 'actor_type', 'actor_id', 'size'] as const;

function compare(before: Snapshot, after: Snapshot): Pick<ReindexReport, 'missingNodes' | 'extraNodes' | 'differences'> {
  const missingNodes: string[] = [];
  const extraNodes: string[] = [];
  const differences: string[] = [];
  const note = (s: string) => {
    if (differences.length < 500) differences.push(s);
  };
  for (const [id, b] of before.nodes) {
    const a = after.nodes.get(id);
    if (!a) {
      missingNodes.push(id);
      note(`node ${id} (${b.path}) is not in git`);
      continue;
    }
    for (const f of NODE_FIELDS) if (a[f] !== b[f]) note(`node ${id} ${f}: index ${JSON.stringify(b[f])}, git ${JSON.stringify(a[f])}`);
    const bv = before.versions.get(id) ?? [];
    const av = after.versions.get(id) ?? [];
    if (bv.length !== av.length) note(`node ${id} has ${bv.length} versions in the index, ${av.length} in git`);
    for (let i = 0; i < Math.min(bv.length, av.length); i++) {
      for (const f of VERSION_FIELDS) {
        if (av[i][f] !== bv[i][f]) note(`node ${id} v${bv[i].version} ${f}: index ${JSON.stringify(bv[i][f])}, git ${JSON.stringify(av[i][f])}`);
      }
    }
  }
  for (const [id, a] of after.nodes) {
    if (!before.nodes.has(id)) {
      extraNodes.push(id);
      note(`node ${id} (${a.path}) was missing from the index`);
    }
  }
  return { missingNodes, extraNodes, differences };
}
