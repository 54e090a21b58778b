import { isJsonDocument } from '../encoding.ts';
import type { Repo } from '../git/repo.ts';
import type { NodeRow } from '../indexStore.ts';
import { joinPath, parentPath, PLACEHOLDER, TRASH_DIR, typeFromName } from '../paths.ts';
import { TREE_MODE } from '../tree.ts';
import type { NodeType } from '../types.ts';

/*
 * The tree-diff planner: what a commit without trailers changed, as folder and file additions,
 * removals, modifications and moves (renames paired by object id, folders by tree id first),
 * from two trees (planDiff) or from `git diff-tree` lines (planFromChanges).
 */

/** Mode of trees in `git diff-tree` and `git ls-tree` output. */
export const GIT_TREE_MODE = '040000';

/** One line of `git diff-tree -r -t --raw`. */
export interface RawChange {
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: string;
}

export interface FileInfo {
  oid: string;
  size: number;
  /** The type its name and content give it (json only when the content is a JSON document). */
  type: Exclude<NodeType, 'folder'>;
  /** What the content can be served as: a node of that type keeps it. */
  json: boolean;
  text: boolean;
}

export interface ContentKind {
  json: boolean;
  text: boolean;
}

export type TypeAt = (path: string) => NodeType | undefined;

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function contentKind(bytes: Buffer): ContentKind {
  let text = true;
  try {
    utf8.decode(bytes);
  } catch {
    text = false;
  }
  return { json: text && isJsonDocument(bytes), text };
}

export function fileInfo(path: string, oid: string, size: number, kind: ContentKind): FileInfo {
  let type = typeFromName(path);
  if (type === 'json' && !kind.json) type = 'file';
  return { oid, size, type, json: kind.json, text: kind.text };
}

/** A node keeps its type while the new content fits it; otherwise name and content decide. */
export function keptType(row: NodeRow | undefined, f: FileInfo): Exclude<NodeType, 'folder'> {
  if (!row || row.type === 'folder') return f.type;
  if (row.type === 'json') return f.json ? 'json' : f.type;
  if (row.type === 'markdown') return f.text ? 'markdown' : f.type === 'markdown' ? 'file' : f.type;
  return row.type;
}

export interface DiffPlan {
  addedFolders: string[];
  removedFolders: string[];
  folderMoves: { from: string; to: string }[];
  fileMoves: { from: string; to: string }[];
  added: Map<string, FileInfo>;
  removed: Set<string>;
  modified: Map<string, FileInfo>;
}

export interface TreeChange {
  path: string;
  oid: string;
}

/** Compares two trees (reading only subtrees whose ids differ) and pairs up renames by object id. */
export async function planDiff(repo: Repo, from: string | null, to: string | null): Promise<DiffPlan> {
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
export function planFromChanges(changes: RawChange[], info: (p: string, oid: string) => FileInfo): Promise<DiffPlan> {
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
