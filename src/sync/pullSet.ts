import type { ContentStore, NodeInfo, TreeNode } from '../content/contentStore.ts';
import { pathInScope } from '../policies/scope.ts';
import type { Changelog } from '../events/changelog.ts';

/** One file the client must bring in line: write it (`upsert`) or remove its local copy (`delete`). */
export interface PullEntry {
  action: 'upsert' | 'delete';
  nodeId: string;
  nodeType: string;
  /** Project path: the current one for upserts; for deletes the last path the client can know. */
  path: string;
  version: number;
  contentHash: string | null;
  size: number;
}

/**
 * The files a folder client mirroring `scope` must update to go from commit `cursor` to commit
 * `until`, keyed and sorted by node id (stable paging). Cursor 0 is a full listing. Otherwise
 * each node touched in between is looked up as it is now: an active file in the scope is an
 * upsert (a known id at a new path is a rename for the client), anything else a delete; a
 * touched folder stands for every file below it (moves and trashes of folders move them all).
 */
export function pullSet(store: ContentStore, changelog: Changelog, projectId: string, scope: string, cursor: number, until: number): PullEntry[] {
  const out = new Map<string, PullEntry>();
  if (cursor === 0) {
    for (const n of filesUnder(store, projectId, scope)) out.set(n.id, upsert(n));
    return sorted(out);
  }
  const lastInScope = new Map<string, { path: string | null; type: string }>();
  for (const e of changelog.between(projectId, cursor, until)) {
    const prev = lastInScope.get(e.nodeId);
    const seen = [e.oldPath, e.path].filter((p): p is string => p !== null && p !== '' && pathInScope(scope, p) && !p.startsWith('.trash/'));
    lastInScope.set(e.nodeId, { path: seen.length ? seen[seen.length - 1]! : (prev?.path ?? null), type: e.nodeType });
  }
  for (const [id, known] of lastInScope) {
    const node = findById(store, projectId, id);
    const live = node !== null && node.state === 'active' && pathInScope(scope, node.path);
    // A node never inside the scope during the window is none of the client's business.
    if (!live && known.path === null) continue;
    if (known.type === 'folder') {
      if (node) {
        for (const f of filesUnder(store, projectId, node.path)) {
          if (live) out.set(f.id, upsert(f));
          else out.set(f.id, deletion(f.id, f.type, null));
        }
      }
      // The folder itself tells the client to drop what it holds under the old path (needed when
      // it was deleted permanently and its files can no longer be listed).
      if (!live && known.path !== null) out.set(id, deletion(id, 'folder', known.path));
      continue;
    }
    if (live && node.type !== 'folder') out.set(id, upsert(node));
    else out.set(id, deletion(id, known.type, known.path));
  }
  return sorted(out);
}

/**
 * The current state of the given nodes as pull entries. Anything that is not a live file in the
 * scope is the same bare delete (type `file`, no path): what is out of the scope, or in another
 * project, reveals nothing about itself, not even its type.
 */
export function currentEntries(store: ContentStore, projectId: string, scope: string, ids: string[]): PullEntry[] {
  return ids.map((id) => {
    const node = findById(store, projectId, id);
    if (node && node.state === 'active' && node.type !== 'folder' && pathInScope(scope, node.path)) return upsert(node);
    return deletion(id, 'file', null);
  });
}

function upsert(n: NodeInfo): PullEntry {
  return { action: 'upsert', nodeId: n.id, nodeType: n.type, path: n.path, version: n.version, contentHash: n.contentHash, size: n.size };
}

function deletion(nodeId: string, nodeType: string, path: string | null): PullEntry {
  return { action: 'delete', nodeId, nodeType, path: path ?? '', version: 0, contentHash: null, size: 0 };
}

function sorted(m: Map<string, PullEntry>): PullEntry[] {
  return [...m.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
}

function findById(store: ContentStore, projectId: string, id: string): NodeInfo | null {
  try {
    return store.getById(projectId, id);
  } catch {
    return null;
  }
}

/** Every file (non-folder) at or below `path`; none when `path` does not exist. */
function filesUnder(store: ContentStore, projectId: string, path: string): NodeInfo[] {
  let root: TreeNode;
  try {
    root = store.tree(projectId, path, -1);
  } catch {
    return [];
  }
  const files: NodeInfo[] = [];
  const walk = (n: TreeNode) => {
    if (n.type !== 'folder') {
      files.push(n);
      return;
    }
    for (const c of n.children ?? []) walk(c);
  };
  walk(root);
  return files;
}
