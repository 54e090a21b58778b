import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { CommitApplier } from './commitApplier.ts';
import { isJsonDocument } from './encoding.ts';
import type { CommitData } from './git/commitObject.ts';
import type { Repo, TreeEntryRaw } from './git/repo.ts';
import type { IndexStore, NodeRow, VersionRow } from './indexStore.ts';
import { newNodeId } from './mutations.ts';
import { isTrashPath, joinPath, parentPath, PLACEHOLDER, TRASH_DIR, typeFromName } from './paths.ts';
import { TREE_MODE } from './tree.ts';
import { parseMessage, type NodeChange } from './trailers.ts';
import type { Actor, NodeType, ReindexReport, SyncReport } from './types.ts';

export interface SyncDeps {
  projectId: string;
  db: Db;
  index: IndexStore;
  repo: Repo;
  logger?: Logger;
}

interface ChainCommit {
  id: string;
  commit: CommitData;
}

/** Commits of trailers applied per SQLite transaction while replaying. */
const GROUP = 500;

/**
 * Indexes the commits on `main` after the last indexed one. Walks first parents back from the
 * tip; if the last indexed commit is not among them (history rewritten) the project is rebuilt.
 * Must run under the project's write lock.
 */
export async function syncFromGit(deps: SyncDeps, actor?: Actor): Promise<SyncReport> {
  const { index, repo, projectId } = deps;
  const tip = repo.readMain();
  const st = index.indexState(projectId);
  const last = st?.headCommit ?? null;
  if (tip === last) return { projectId, indexedCommits: 0, rebuilt: false, head: tip };
  const { chain, reached } = await firstParents(repo, tip, last);
  if (!reached) {
    deps.logger?.warn({ projectId, last, tip }, 'main no longer contains the last indexed commit: rebuilding the index');
    deps.db.transaction(() => index.clearProject(projectId)).immediate();
    const full = await firstParents(repo, tip, null);
    await replay(deps, full.chain, 0, null, actor);
    return { projectId, indexedCommits: full.chain.length, rebuilt: true, head: tip };
  }
  const prevTree = last ? (await repo.readCommit(last)).tree : null;
  await replay(deps, chain, st?.projectVersion ?? 0, prevTree, actor);
  return { projectId, indexedCommits: chain.length, rebuilt: false, head: tip };
}

/** Rebuilds a project's index from git alone and reports how it differs from the one before. */
export async function rebuildIndex(deps: SyncDeps, actor?: Actor): Promise<ReindexReport> {
  const { index, repo, projectId } = deps;
  const before = snapshot(index, projectId);
  deps.db.transaction(() => index.clearProject(projectId)).immediate();
  const { chain } = await firstParents(repo, repo.readMain(), null);
  await replay(deps, chain, 0, null, actor);
  const after = snapshot(index, projectId);
  return { projectId, commits: chain.length, nodes: after.nodes.size, versions: after.versionCount, ...compare(before, after) };
}

async function firstParents(repo: Repo, tip: string | null, stop: string | null): Promise<{ chain: ChainCommit[]; reached: boolean }> {
  const chain: ChainCommit[] = [];
  let c = tip;
  while (c && c !== stop) {
    const commit = await repo.readCommit(c);
    chain.push({ id: c, commit });
    c = commit.parents[0] ?? null;
  }
  return { chain: chain.reverse(), reached: c === stop };
}

async function replay(deps: SyncDeps, chain: ChainCommit[], startPv: number, startTree: string | null, actor?: Actor): Promise<void> {
  const { db, index, projectId } = deps;
  let pv = startPv;
  let prevTree = startTree;
  const sinceRepack = index.indexState(projectId)?.commitsSinceRepack ?? 0;
  let i = 0;
  while (i < chain.length) {
    const parsed = parseMessage(chain[i].commit.message);
    if (parsed) {
      const group: { c: ChainCommit; p: NonNullable<ReturnType<typeof parseMessage>> }[] = [];
      while (i < chain.length && group.length < GROUP) {
        const p = parseMessage(chain[i].commit.message);
        if (!p) break;
        group.push({ c: chain[i], p });
        i++;
      }
      db.transaction(() => {
        for (const { c, p } of group) {
          const applier = new CommitApplier(index, { projectId, projectVersion: ++pv, actor: p.actor, message: p.message, time: isoTime(c.commit.time) });
          for (const change of p.changes) applier.apply(change);
          applier.finalize(c.id);
          prevTree = c.commit.tree;
        }
        index.setIndexState(projectId, { headCommit: group[group.length - 1].c.id, projectVersion: pv, commitsSinceRepack: sinceRepack + pv - startPv });
      }).immediate();
      continue;
    }
    const c = chain[i++];
    const plan = await planDiff(deps.repo, prevTree, c.commit.tree);
    const who: Actor = actor ?? {
      type: 'user',
      id: c.commit.authorEmail || c.commit.authorName,
      author: c.commit.authorEmail || c.commit.authorName,
    };
    db.transaction(() => {
      const applier = new CommitApplier(index, {
        projectId,
        projectVersion: ++pv,
        actor: who,
        message: c.commit.message.trim(),
        time: isoTime(c.commit.time),
      });
      applyPlan(index, projectId, applier, plan);
      applier.finalize(c.id);
      index.setIndexState(projectId, { headCommit: c.id, projectVersion: pv, commitsSinceRepack: sinceRepack + pv - startPv });
    }).immediate();
    prevTree = c.commit.tree;
  }
  if (prevTree) await refreshFolderHashes(deps, prevTree);
}

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

// ------------------------------------------------------------ commits without trailers

interface FileInfo {
  oid: string;
  size: number;
  type: Exclude<NodeType, 'folder'>;
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

/** Compares two trees (reading only subtrees whose ids differ) and pairs up renames by object id. */
async function planDiff(repo: Repo, from: string | null, to: string | null): Promise<DiffPlan> {
  const removedTrees: { path: string; oid: string }[] = [];
  const addedTrees: { path: string; oid: string }[] = [];
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

  const plan: DiffPlan = {
    addedFolders: [],
    removedFolders: [],
    folderMoves: [],
    fileMoves: [],
    added: new Map(),
    removed: new Set(),
    modified: new Map(),
  };
  const expand = async (oid: string, path: string, folders: string[], files: Map<string, string>) => {
    folders.push(path);
    for (const e of await repo.readTree(oid)) {
      if (e.name === PLACEHOLDER) continue;
      const p = joinPath(path, e.name);
      if (e.mode === TREE_MODE) await expand(e.oid, p, folders, files);
      else files.set(p, e.oid);
    }
  };
  const unmatchedRemoved = [...removedTrees];
  for (const t of addedTrees) {
    const k = unmatchedRemoved.findIndex((r) => r.oid === t.oid);
    if (k >= 0) {
      plan.folderMoves.push({ from: unmatchedRemoved[k].path, to: t.path });
      unmatchedRemoved.splice(k, 1);
    } else {
      await expand(t.oid, t.path, plan.addedFolders, addedFiles);
    }
  }
  for (const r of unmatchedRemoved) await expand(r.oid, r.path, plan.removedFolders, removedFiles);

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
  const info = async (p: string, oid: string): Promise<FileInfo> => {
    const bytes = await repo.readBlob(oid);
    let type = typeFromName(p);
    if (type === 'json' && !isJsonDocument(bytes)) type = 'file';
    return { oid, size: bytes.length, type };
  };
  for (const [p, oid] of addedFiles) plan.added.set(p, await info(p, oid));
  for (const [p, oid] of modifiedFiles) plan.modified.set(p, await info(p, oid));
  const depth = (p: string) => p.split('/').length;
  plan.addedFolders.sort((a, b) => depth(a) - depth(b));
  plan.removedFolders.sort((a, b) => depth(a) - depth(b));
  return plan;
}

function applyPlan(index: IndexStore, projectId: string, applier: CommitApplier, plan: DiffPlan): void {
  const folderAt = (p: string) => index.rowAt(projectId, p, true);
  const fileAt = (p: string) => index.rowAt(projectId, p, false);
  const parentOf = (p: string): string | null => {
    const dir = parentPath(p);
    return dir === '' || dir === TRASH_DIR ? null : (folderAt(dir)?.id ?? null);
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
    const type = row && !(row.type === 'json' && f.type !== 'json') ? row.type : f.type;
    applier.apply({ id: row?.id ?? newNodeId(), type, op: row ? 'update' : 'create', parentId: parentOf(p), path: p, blobId: f.oid, size: f.size });
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
