import { NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import { virtualFolder, type IndexStore } from './indexStore.ts';
import { TRASH_DIR } from './paths.ts';
import { TimeSlice } from './timeSlice.ts';
import type { NodeInfo, TreeNode } from './types.ts';

export interface TreePageOptions {
  /** -1: unlimited; 0: the node alone. */
  maxDepth: number;
  /** Most nodes in the page (the root and the folders repeated to hold a later page do not count). */
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
  /**
   * For callers limited to part of the project: 'in' (shown whole), 'way' (a folder on the
   * way to what is shown: only its visible children are listed and counted) or 'out' (hidden).
   */
  visibility?: (path: string) => 'in' | 'way' | 'out';
}

export interface TreePage {
  root: TreeNode;
  /** Pass back as `cursor` for the rest; null when this page ends the tree. */
  nextCursor: string | null;
  /** Nodes in this page (without the root and repeated folders). */
  count: number;
}

/**
 * One page of the tree under `path`, depth first (folders first, then by name, as `ls`). Each
 * page is a well-formed tree rooted at `path`: a later page repeats the folders leading to its
 * first node (with their metadata), so a client merges pages by id. The cursor names the last
 * node given (its path), so pages stay correct when the tree changes in between: nothing is
 * given twice, nodes added before the cursor are not given. Reads yield to the event loop
 * between folders.
 */
export async function treePage(index: IndexStore, projectId: string, path: string, options: TreePageOptions): Promise<TreePage> {
  const visibility = options.visibility ?? (() => 'in' as const);
  const slice = new TimeSlice();
  const root = rootNode(index, projectId, path);
  if (root.type !== 'folder' || options.maxDepth === 0) {
    if (root.type === 'folder' && visibility(path) === 'way') root.childrenCount = visibleChildren(index, projectId, root, visibility).length;
    return { root, nextCursor: null, count: 0 };
  }
  const after = options.cursor ? decodeCursor(options.cursor, path) : null;
  let count = 0;
  let last: NodeInfo | null = null;
  let more = false;
  /** Walks `folder` (already placed in the output) from `resume` (names below it, or null: from the start). */
  const walk = async (folder: TreeNode, depth: number, resume: string[] | null): Promise<boolean> => {
    await slice.tick();
    const kids = visibleChildren(index, projectId, folder, visibility);
    if (visibility(folder.path) === 'way') folder.childrenCount = kids.length;
    folder.children ??= [];
    let start = 0;
    if (resume && resume.length > 0) {
      const at = kids.findIndex((k) => k.name === resume[0]);
      if (at >= 0) {
        const k = kids[at];
        // The cursor's own node was given; a folder on its way was given too, but maybe not all of it.
        if (resume.length > 1 || k.type === 'folder') {
          if (k.type === 'folder' && (options.maxDepth < 0 || depth + 1 < options.maxDepth)) {
            const copy: TreeNode = { ...k, children: [] };
            folder.children.push(copy);
            if (!(await walk(copy, depth + 1, resume.slice(1)))) return false;
            if (copy.children!.length === 0) folder.children.pop();
          }
        }
        start = at + 1;
      } else {
        // The cursor's node is gone: continue with the first entry after where it was.
        const wasFolder = resume.length > 1 || after!.folder;
        start = kids.findIndex((k) => compareEntries(k, resume[0], wasFolder) > 0);
        if (start < 0) start = kids.length;
      }
    }
    for (let i = start; i < kids.length; i++) {
      if (count >= options.limit) {
        more = true;
        return false;
      }
      const k: TreeNode = { ...kids[i], children: null };
      folder.children.push(k);
      count++;
      last = k;
      if (k.type === 'folder' && (options.maxDepth < 0 || depth + 1 < options.maxDepth)) {
        k.children = [];
        if (!(await walk(k, depth + 1, null))) return false;
      }
    }
    return true;
  };
  const relative = after === null ? null : (path === '' ? after.path : after.path.slice(path.length + 1)).split('/');
  await walk(root, 0, relative);
  const end = last as NodeInfo | null;
  return { root, nextCursor: more && end ? encodeCursor(end) : null, count };
}

/** Folders first, then names in the order of the index (SQLite's binary order of UTF-8). */
function compareEntries(k: NodeInfo, name: string, folder: boolean): number {
  const group = Number(k.type !== 'folder') - Number(!folder);
  return group !== 0 ? group : Buffer.compare(Buffer.from(k.name), Buffer.from(name));
}

function visibleChildren(
  index: IndexStore,
  projectId: string,
  folder: TreeNode,
  visibility: (path: string) => 'in' | 'way' | 'out',
): NodeInfo[] {
  let kids: NodeInfo[];
  if (folder.path === '') kids = index.children(projectId, null, 'active');
  else if (folder.path === TRASH_DIR) kids = index.children(projectId, null, 'trashed');
  else kids = index.children(projectId, folder.id, folder.state);
  return kids.filter((k) => visibility(k.path) !== 'out');
}

/** The root of a tree: a node, or the project root / the trash folder (which are not nodes). */
export function rootNode(index: IndexStore, projectId: string, path: string): TreeNode {
  if (path === '' || path === TRASH_DIR) return virtualRoot(index, projectId, path);
  const n = index.nodeByPath(projectId, path);
  if (!n) throw new NotFoundError(`no node at ${path}`, { path });
  return { ...n, children: null };
}

/**
 * The project root as a folder: its children counted like any folder's, created when the
 * project's first commit was made and updated at its last (null before the first commit).
 */
function virtualRoot(index: IndexStore, projectId: string, path: string): TreeNode {
  const first = index.commitAt(projectId, 1);
  const st = index.indexState(projectId);
  const latest = st && st.projectVersion > 0 ? index.commitAt(projectId, st.projectVersion) : undefined;
  const root = virtualFolder(projectId, path);
  return {
    ...root,
    childrenCount: index.children(projectId, null, root.state).length,
    createdAt: (first?.created_at ?? null) as string,
    updatedAt: (latest?.created_at ?? null) as string,
  };
}

function encodeCursor(last: NodeInfo): string {
  return Buffer.from(JSON.stringify({ after: last.path, folder: last.type === 'folder' }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, root: string): { path: string; folder: boolean } {
  let c: { after?: unknown; folder?: unknown } = {};
  try {
    c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof c;
  } catch {
    /* refused below */
  }
  const after = c?.after;
  if (typeof after !== 'string' || after === '' || (root !== '' && !after.startsWith(root + '/'))) {
    throw new ValidationError('cursor is not one this tree gave', { field: 'cursor' });
  }
  return { path: after, folder: c.folder === true };
}
