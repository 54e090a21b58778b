import { ConflictError, NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import type { IndexStore } from './indexStore.ts';
import { joinPath, parentPath } from './paths.ts';
import type { Mutation, NodeType, WritableNodeType } from './types.ts';

/**
 * Rules of the node operations (ContentStore.updateNode, createFolder, moveNode, createNodes,
 * seed) that depend on the state of the tree. Each operation reads the node(s) it works on,
 * builds its mutations from them, and re-checks them with a commit guard inside the project's
 * serialized write section: if a concurrent request changed them in between, the call fails
 * with a conflict instead of applying mutations built for a tree that no longer exists.
 */

/** A node as an operation found it before queueing its commit. */
export interface SeenNode {
  id: string;
  path: string;
  type: NodeType;
}

/** Throws unless the node is still active at the same path with the same type (inside the write section). */
export function expectInPlace(index: IndexStore, projectId: string, seen: SeenNode, role = 'node'): void {
  const row = index.rowById(seen.id);
  if (!row || row.project_id !== projectId) throw new NotFoundError(`the ${role} was deleted meanwhile`, { id: seen.id });
  if (row.state !== 'active') throw new ConflictError(`the ${role} ${seen.path} was moved to the trash meanwhile`, { id: seen.id });
  if (row.path !== seen.path || row.type !== seen.type) {
    throw new ConflictError(`the ${role} ${seen.path} was changed meanwhile (now ${row.path}); retry`, { id: seen.id, path: row.path });
  }
}

/** Throws a conflict when something is at `path` (a node that must not exist yet). */
export function expectAbsent(index: IndexStore, projectId: string, path: string, details: Record<string, unknown> = {}): void {
  if (index.rowByPath(projectId, path)) throw new ConflictError(`${path} already exists.`, { path, ...details });
}

/** A node name: one path segment. */
export function assertName(name: unknown, field = 'name'): asserts name is string {
  if (typeof name !== 'string' || name === '' || name.includes('/') || name === '.' || name === '..') {
    throw new ValidationError(`${field} must be one path segment`, { field });
  }
}

/** The path a node gets when renamed to `name` in its folder. */
export function renamedPath(path: string, name: string): string {
  return joinPath(parentPath(path), name);
}

/** One item of ContentStore.createNodes (the nested bulk-create). */
export interface NewNode {
  name: string;
  type: NodeType;
  /** Required for json/markdown/file, refused for folders. */
  content?: unknown;
  /** Names this item for `parentTempId` of other items (and in the answer). */
  tempId?: string;
  /** The item that is this item's folder; excludes parentId. */
  parentTempId?: string;
  /** An existing folder (null: the root); default: the operation's parent. */
  parentId?: string | null;
}

/** What createNodes will commit: every item's path, and the folders it expects to find unchanged. */
export interface NodePlan {
  projectId: string;
  items: { path: string; tempId: string | null; type: NodeType; content?: unknown }[];
  /** Item indexes, parents before children. */
  order: number[];
  parents: SeenNode[];
}

/**
 * Resolves the items of a nested create to paths (ValidationError naming `nodes.<i>.<field>`
 * for what cannot be understood: a child must never land elsewhere than its parent reference
 * says). `folderAt(id)` resolves an existing folder (throws when it is not one).
 */
export function planNodes(
  projectId: string,
  defaultParent: string | null,
  items: NewNode[],
  folderAt: (id: string, field: string) => SeenNode,
): NodePlan {
  if (!Array.isArray(items) || items.length === 0) throw new ValidationError('nodes must be a non-empty list', { field: 'nodes' });
  const field = (i: number, f: string) => `nodes.${i}.${f}`;
  const byTemp = new Map<string, number>();
  items.forEach((n, i) => {
    assertName(n?.name, field(i, 'name'));
    if (n.tempId === undefined) return;
    if (typeof n.tempId !== 'string' || n.tempId === '') throw new ValidationError('temp_id must be a non-empty string', { field: field(i, 'temp_id') });
    if (byTemp.has(n.tempId)) throw new ValidationError(`temp_id "${n.tempId}" repeats nodes.${byTemp.get(n.tempId)}.temp_id`, { field: field(i, 'temp_id') });
    byTemp.set(n.tempId, i);
  });
  const parents = new Map<string, SeenNode>();
  const parentOf = (id: string | null, f: string): string => {
    if (id === null) return '';
    let p = parents.get(id);
    if (!p) parents.set(id, (p = folderAt(id, f)));
    return p.path;
  };
  const root = parentOf(defaultParent, 'parent_id');
  const paths: (string | undefined)[] = new Array(items.length);
  const order: number[] = [];
  const resolving = new Set<number>();
  const resolve = (i: number): string => {
    const known = paths[i];
    if (known !== undefined) return known;
    const n = items[i];
    let dir: string;
    if (n.parentTempId !== undefined) {
      if (n.parentId !== undefined) throw new ValidationError('give parent_id or parent_temp_id, not both', { field: field(i, 'parent_temp_id') });
      const p = byTemp.get(n.parentTempId);
      if (p === undefined) throw new ValidationError(`parent_temp_id "${n.parentTempId}" names no item`, { field: field(i, 'parent_temp_id') });
      if (items[p].type !== 'folder') throw new ValidationError(`parent_temp_id "${n.parentTempId}" is not a folder`, { field: field(i, 'parent_temp_id') });
      if (p === i || resolving.has(p)) throw new ValidationError('parent_temp_id forms a cycle', { field: field(i, 'parent_temp_id') });
      resolving.add(i);
      dir = resolve(p);
      resolving.delete(i);
    } else {
      dir = n.parentId === undefined ? root : parentOf(n.parentId, field(i, 'parent_id'));
    }
    const path = joinPath(dir, n.name);
    paths[i] = path;
    order.push(i);
    return path;
  };
  const seen = new Map<string, number>();
  items.forEach((n, i) => {
    const path = resolve(i);
    if (seen.has(path)) throw new ValidationError(`nodes.${i} repeats the path ${path} of nodes.${seen.get(path)}`, { field: field(i, 'name') });
    seen.set(path, i);
    if (n.type === 'folder') {
      if (n.content !== undefined) throw new ValidationError('folders have no content', { field: field(i, 'content') });
    } else if (n.content === undefined) {
      throw new ValidationError(`${field(i, 'content')} is required`, { field: field(i, 'content') });
    }
  });
  return {
    projectId,
    items: items.map((n, i) => ({ path: paths[i]!, tempId: n.tempId ?? null, type: n.type, content: n.content })),
    order,
    parents: [...parents.values()],
  };
}

/** The mutations of a plan: folders must not exist yet (checked by the guard), files are created (base version 0). */
export function planMutations(plan: NodePlan): Mutation[] {
  return plan.order.map((i) => {
    const n = plan.items[i];
    return n.type === 'folder'
      ? { op: 'mkdir', path: n.path }
      : { op: 'write', path: n.path, type: n.type as WritableNodeType, content: n.content, baseVersion: 0 };
  });
}

/** The guard of a plan: its parents unchanged, its folders absent (files are checked by base version 0). */
export function checkPlan(index: IndexStore, plan: NodePlan): void {
  for (const p of plan.parents) expectInPlace(index, plan.projectId, p, 'parent folder');
  // `index` is the mutation's position, as for every other error of the call (createNodes maps it back to the item).
  plan.order.forEach((i, k) => {
    const n = plan.items[i];
    if (n.type === 'folder') expectAbsent(index, plan.projectId, n.path, { index: k });
  });
}
