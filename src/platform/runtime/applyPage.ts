import type { ContentStore, Mutation, NodeInfo } from '../../content/contentStore.ts';
import { encodeContent } from '../../content/encoding.ts';
import { hashObject } from '../../content/git/objects.ts';
import type { SourceChange, SourceItem } from './connector.ts';
import { isVariantOf, joinPath, safeItemPath, variantOf } from './itemPaths.ts';
import type { ItemRow } from './itemStore.ts';

/** What one pulled page becomes: the mutations of its commit and the item rows to store with it. */
export interface PagePlan {
  mutations: Mutation[];
  /** Rows to write (inserted or replaced); `nodeId` null for nodes the commit creates. */
  rows: ItemRow[];
  /** Source ids whose rows go (deleted at the source). */
  removed: string[];
  created: number;
  updated: number;
  deleted: number;
  /** Project paths changed on both sides: the source's version won, ours stays in the history. */
  conflicts: string[];
  /** Items left out, with why (larger than the service stores). */
  skipped: string[];
}

export interface PageScope {
  content: ContentStore;
  projectId: string;
  /** The sync's folder ('' for the project root). */
  folder: string;
  /** The item map, as of the end of the previous page. */
  rows: Map<string, ItemRow>;
  /** Node id → source id, for every row with a node. */
  owners: Map<string, string>;
  /** Largest content the store accepts (CNS_MAX_CONTENT_BYTES). */
  maxContentBytes: number;
}

/**
 * Turns a page of source changes into content-store mutations. An item keeps its node: a new
 * path at the source moves it (history kept); an item deleted at the source goes to the trash;
 * an unchanged item (same source version and path) is not touched. A node changed here since
 * the sync last wrote it, and changed at the source too, is a conflict: the source wins.
 */
export function planPage(scope: PageScope, changes: SourceChange[]): PagePlan {
  const plan: PagePlan = { mutations: [], rows: [], removed: [], created: 0, updated: 0, deleted: 0, conflicts: [], skipped: [] };
  /** Project paths this page writes to or moves to (a later item of the page may not take them). */
  const claimed = new Set<string>();
  /** Paths this page moves nodes away from (they are free for later items). */
  const vacated = new Set<string>();
  const last = new Map<string, SourceChange>();
  // A page may name an item twice (an edit during paging): its last change counts.
  for (const c of changes) last.set(c.kind === 'upsert' ? c.item.sourceId : c.sourceId, c);

  for (const change of last.values()) {
    if (change.kind === 'delete') {
      const row = scope.rows.get(change.sourceId);
      if (!row) continue;
      plan.removed.push(change.sourceId);
      const node = liveNode(scope, row);
      if (node) {
        plan.mutations.push({ op: 'remove', path: node.path });
        vacated.add(node.path);
        plan.deleted++;
      }
      continue;
    }
    const item = change.item;
    const row = scope.rows.get(item.sourceId);
    const node = row ? liveNode(scope, row) : null;
    const bytes = encodeContent(item.type, item.content);
    if (bytes.length > scope.maxContentBytes) {
      plan.skipped.push(`${joinPath(scope.folder, item.path)}: ${bytes.length} bytes, more than the ${scope.maxContentBytes} a node may hold`);
      continue;
    }
    const hash = hashObject('blob', bytes);
    const wanted = joinPath(scope.folder, safeItemPath(item.path, item.sourceId, item.type));

    if (row && node && node.type === item.type) {
      const samePath = node.path === wanted || isVariantOf(node.path, wanted);
      if (row.sourceVersion === item.sourceVersion && row.path === item.path && samePath) continue;
      let target = node.path;
      if (!samePath) {
        target = freePath(scope, wanted, claimed, vacated, item.sourceId);
        plan.mutations.push({ op: 'move', from: node.path, to: target });
        vacated.add(node.path);
      }
      claimed.add(target);
      const changedHere = row.contentHash !== null && node.contentHash !== row.contentHash;
      if (node.contentHash !== hash) {
        plan.mutations.push({ op: 'write', path: target, type: item.type, content: bytesFor(item, bytes) });
        if (changedHere) plan.conflicts.push(target);
      }
      if (node.contentHash !== hash || !samePath) plan.updated++;
      plan.rows.push(rowOf(item, node.id, target, hash, row.meta));
      continue;
    }

    // A new item, or one whose node is gone here (trashed or deleted by someone): a new node.
    const target = freePath(scope, wanted, claimed, vacated, item.sourceId);
    claimed.add(target);
    const existing = scope.content.findByPath(scope.projectId, target);
    plan.mutations.push({ op: 'write', path: target, type: item.type, content: bytesFor(item, bytes) });
    // A file already at the path that no item owns is adopted: its content stays in its history.
    if (existing && existing.state === 'active') {
      if (existing.contentHash !== hash) plan.conflicts.push(target);
      plan.updated++;
    } else {
      plan.created++;
    }
    plan.rows.push(rowOf(item, existing?.id ?? null, target, hash, row?.meta ?? {}));
  }
  return plan;
}

/** The item's node when it is still an active node of the project. */
function liveNode(scope: PageScope, row: ItemRow): NodeInfo | null {
  const node = row.nodeId ? scope.content.findById(row.nodeId) : scope.content.findByPath(scope.projectId, row.nodePath);
  return node && node.projectId === scope.projectId && node.state === 'active' && node.type !== 'folder' ? node : null;
}

/**
 * `wanted`, or its first variant (`name (2).md`…) that no other item holds, no folder fills and
 * this page has not claimed. A file nobody's item owns does not block the path (it is adopted).
 */
function freePath(scope: PageScope, wanted: string, claimed: Set<string>, vacated: Set<string>, sourceId: string): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? wanted : variantOf(wanted, n);
    if (claimed.has(candidate)) continue;
    const existing = scope.content.findByPath(scope.projectId, candidate);
    if (!existing || existing.state !== 'active' || vacated.has(candidate)) return candidate;
    if (existing.type === 'folder') continue;
    const owner = scope.owners.get(existing.id);
    if (owner === undefined || owner === sourceId) return candidate;
  }
}

/** Files keep the bytes already encoded; json and markdown are written from their value. */
function bytesFor(item: SourceItem, bytes: Buffer): unknown {
  return item.type === 'file' ? bytes : item.content;
}

function rowOf(item: SourceItem, nodeId: string | null, nodePath: string, hash: string, previousMeta: Record<string, unknown>): ItemRow {
  return {
    sourceId: item.sourceId,
    nodeId,
    nodePath,
    path: item.path,
    sourceVersion: item.sourceVersion,
    contentHash: hash,
    meta: item.meta ?? previousMeta,
  };
}
