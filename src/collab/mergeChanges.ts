import { ConflictError, decodeContent, type ContentStore, type NodeInfo, type NodeType, type PlannedChange, type WritableNodeType } from '../content/contentStore.ts';
import { encodeContent } from '../content/encoding.ts';
import { hashObject } from '../content/git/objects.ts';
import { isSameOrInside } from '../content/paths.ts';
import type { ChangeEntry } from '../content/types.ts';
import { mergeNode, type MergeSides, type NodeMerge } from './threeWayMerge.ts';

/*
 * The one way changes made against an older state are merged into the current content: collab
 * commits, agent workspaces and sandbox write-backs describe what they changed, each path with
 * what its writer saw there, and `planMerge` plans them against the tip. It is meant to run
 * inside `ContentStore.commitPlanned` (see commitMerge.ts): nothing can be written between the
 * plan and its commit, so nothing has to be re-checked or retried.
 */

/** What the writer saw at a path when it started. */
export interface Seen {
  /** The node that was there; null: nothing was (the change creates the path). */
  nodeId: string | null;
  /** That node's version then (null with no node). */
  version: number | null;
  /** The project version the writer read (a folder counts as changed when anything at, above or beneath it changed since); absent: a folder always counts as changed. */
  projectVersion?: number;
}

/** One change to merge. Removals are planned first: a write or folder may take the place of what they remove. */
export type IncomingChange =
  /** A file's new content (as the node stores it); `seen` null: write over whatever is there, without merging. */
  | { op: 'write'; path: string; type: WritableNodeType; bytes: Buffer; seen: Seen | null }
  | { op: 'mkdir'; path: string; seen: Seen }
  /** `type`: what the writer removed (for the conflict's answer). */
  | { op: 'remove'; path: string; type?: NodeType; seen: Seen };

/** What a change came to. */
export interface MergedChange {
  action: 'created' | 'updated' | 'deleted';
  type: NodeType;
  /** The path changed since the writer's base, and the change was reconciled with that (three ways for content). */
  merged: boolean;
  /** The path holds exactly this already: nothing is written for it. */
  unchanged: boolean;
}

/** Why a change could not be merged; each surface words these its own way. */
export type Situation =
  | { is: 'removed-changed'; folder: boolean; baseVersion: number | null; currentVersion: number }
  | { is: 'removed-replaced' }
  | { is: 'blocked'; at: string }
  | { is: 'kind-replaced'; mine: 'file' | 'folder' }
  | { is: 'gone' }
  | { is: 'both-created' }
  | { is: 'other-node' }
  | { is: 'type-changed'; from: NodeType; to: NodeType }
  /** Both sides changed the content in the same places (the regions say where). */
  | { is: 'clash' };

export type Wording = (s: Situation) => string;

export interface MergeConflict {
  /** The change's index in the list given. */
  index: number;
  path: string;
  nodeId: string | null;
  type: NodeType;
  baseVersion: number | null;
  currentVersion: number | null;
  /** text, json or binary (the content clashed), or type, replaced, deleted, created, changed, blocked. */
  kind: string;
  situation: Situation['is'];
  /** The merge's conflicting regions, or `[{ reason }]`. */
  regions: unknown[];
  /** Text merges: the merged text with conflict markers. */
  mergedText?: string;
  reason: string;
}

export interface MergePlan {
  /** What to commit (empty: nothing), removals first. */
  changes: PlannedChange[];
  /** By the index of each change given: null when there was nothing to do there, or it conflicts. */
  outcomes: (MergedChange | null)[];
  /** Non-empty: nothing may be written. */
  conflicts: MergeConflict[];
}

/** The content reads a merge plans with. */
export type MergeReads = Pick<ContentStore, 'findByPath' | 'projectVersion' | 'changesBetween' | 'versionAtProjectVersion' | 'versionContent' | 'readContent'>;

const KIND: Record<Situation['is'], string> = {
  'removed-changed': 'changed',
  'removed-replaced': 'replaced',
  blocked: 'blocked',
  'kind-replaced': 'replaced',
  gone: 'deleted',
  'both-created': 'created',
  'other-node': 'replaced',
  'type-changed': 'type',
  clash: 'content',
};

/** Thrown (as a 409) when changes do not merge cleanly; nothing has been written. */
export class MergeConflictError extends ConflictError {}

/** A conflict as collab commits and workspace completions answer it. */
export function conflictAnswer(c: MergeConflict): Record<string, unknown> {
  return {
    path: c.path,
    node_id: c.nodeId,
    type: c.type,
    base_version: c.baseVersion,
    current_version: c.currentVersion,
    kind: c.kind,
    regions: c.regions,
    ...(c.mergedText !== undefined ? { merged_text: c.mergedText } : {}),
  };
}

/**
 * Plans `incoming` against the content as it is now. Per path:
 * - a removal removes the node the writer saw, if it is still as seen (a folder: nothing at,
 *   above or beneath it changed since); another node there, or a change since, is a conflict;
 *   nothing there any more is nothing to do;
 * - a write where nothing is now creates the file, unless the writer changed a node that was
 *   there (deleted or moved since: a conflict); where the node the writer saw is now, it writes
 *   over it when unchanged since, else merges three ways (text by lines, json by keys, files when
 *   one side kept the bytes); a node created meanwhile with other content, or another node, is a
 *   conflict; a folder where a file is written (or back) is replaced only if it is as the writer saw it;
 * - a folder is made unless one is there, or files written beneath it make it.
 */
export async function planMerge(store: MergeReads, projectId: string, incoming: readonly IncomingChange[], words: Wording): Promise<MergePlan> {
  const head = store.projectVersion(projectId);
  const since = new Map<number, ChangeEntry[]>();
  const changedSince = (path: string, at: number | undefined) => {
    if (at === undefined) return true;
    if (!since.has(at)) since.set(at, head > at ? store.changesBetween(projectId, at, head) : []);
    return since.get(at)!.some((c) => [c.path, c.oldPath].some((p) => p !== null && (isSameOrInside(p, path) || isSameOrInside(path, p))));
  };
  const removed: string[] = [];
  const live = (path: string) => {
    if (removed.some((r) => isSameOrInside(path, r))) return null;
    const n = store.findByPath(projectId, path);
    return n && n.state === 'active' ? n : null;
  };
  /** The node is the one the writer saw, unchanged since. */
  const asSeen = (node: NodeInfo, seen: Seen) => node.id === seen.nodeId && (node.type === 'folder' ? !changedSince(node.path, seen.projectVersion) : node.version === seen.version);

  const removals: PlannedChange[] = [];
  const writes: PlannedChange[] = [];
  const outcomes: (MergedChange | null)[] = incoming.map(() => null);
  const conflicts: MergeConflict[] = [];
  const remove = (node: NodeInfo) => {
    removals.push({ op: 'remove', path: node.path });
    removed.push(node.path);
  };
  const conflict = (i: number, now: NodeInfo | null, s: Situation, merge?: { kind: string; regions: unknown[]; mergedText?: string }) => {
    const c = incoming[i]!;
    const reason = words(s);
    conflicts.push({
      index: i,
      path: c.path,
      nodeId: now?.id ?? c.seen?.nodeId ?? null,
      type: c.op === 'mkdir' ? 'folder' : (c.type ?? now?.type ?? 'file'),
      baseVersion: c.seen?.version ?? null,
      currentVersion: now?.version ?? null,
      kind: merge?.kind ?? KIND[s.is],
      situation: s.is,
      regions: merge?.regions ?? [{ reason }],
      ...(merge?.mergedText !== undefined ? { mergedText: merge.mergedText } : {}),
      reason,
    });
  };

  // Removals first, parents before children (a removed folder takes what is beneath it along).
  const removalOrder = [...incoming.keys()].filter((i) => incoming[i]!.op === 'remove').sort((a, b) => compare(incoming[a]!.path, incoming[b]!.path));
  for (const i of removalOrder) {
    const c = incoming[i] as Extract<IncomingChange, { op: 'remove' }>;
    const now = live(c.path);
    if (!now) continue;
    if (now.id !== c.seen.nodeId) conflict(i, now, { is: 'removed-replaced' });
    else if (!asSeen(now, c.seen)) conflict(i, now, { is: 'removed-changed', folder: now.type === 'folder', baseVersion: c.seen.version, currentVersion: now.version });
    else {
      remove(now);
      outcomes[i] = { action: 'deleted', type: now.type, merged: false, unchanged: false };
    }
  }

  const filesBeneath = (path: string) => incoming.some((c) => c.op === 'write' && c.path.startsWith(`${path}/`));
  for (const [i, c] of incoming.entries()) {
    if (c.op === 'remove') continue;
    let now = live(c.path);
    const blocked = foldersAbove(c.path).find((p) => (live(p)?.type ?? 'folder') !== 'folder');
    if (blocked) {
      conflict(i, now, { is: 'blocked', at: blocked });
      continue;
    }
    const mine = c.op === 'mkdir' ? 'folder' : 'file';
    // The writer put a file where a folder is (or back): only what it saw there may give way.
    const replaces = now !== null && (now.type === 'folder') !== (mine === 'folder');
    if (replaces) {
      if (!c.seen || !asSeen(now!, c.seen)) {
        conflict(i, now, { is: 'kind-replaced', mine });
        continue;
      }
      remove(now!);
      now = null;
    }
    if (c.op === 'mkdir') {
      if (now || filesBeneath(c.path)) continue;
      writes.push({ op: 'mkdir', path: c.path });
      outcomes[i] = { action: replaces ? 'updated' : 'created', type: 'folder', merged: false, unchanged: false };
      continue;
    }
    const { type, bytes, seen } = c;
    const write = (content: Buffer) => writes.push({ op: 'write', path: c.path, type, bytes: content });
    if (!now) {
      if (seen?.nodeId && !replaces) {
        conflict(i, null, { is: 'gone' });
        continue;
      }
      write(bytes);
      outcomes[i] = { action: replaces ? 'updated' : 'created', type, merged: false, unchanged: false };
      continue;
    }
    const same = now.type === type && now.contentHash === hashObject('blob', bytes);
    if (seen === null) {
      if (!same) write(bytes);
      outcomes[i] = { action: 'updated', type, merged: false, unchanged: same };
      continue;
    }
    if (seen.nodeId === null) {
      if (same) outcomes[i] = { action: 'updated', type, merged: true, unchanged: true };
      else conflict(i, now, { is: 'both-created' });
      continue;
    }
    if (now.id !== seen.nodeId || seen.version === null || now.version < seen.version) {
      conflict(i, now, { is: 'other-node' });
      continue;
    }
    const behind = now.version !== seen.version;
    if (same) {
      outcomes[i] = { action: 'updated', type, merged: behind, unchanged: true };
      continue;
    }
    if (now.type !== type) {
      conflict(i, now, { is: 'type-changed', from: type, to: now.type });
      continue;
    }
    if (!behind) {
      write(bytes);
      outcomes[i] = { action: 'updated', type, merged: false, unchanged: false };
      continue;
    }
    const m = await threeWay(store, projectId, now, decodeContent(type, bytes), seen.version);
    if ('typeChanged' in m) {
      conflict(i, now, { is: 'type-changed', from: m.typeChanged, to: now.type });
      continue;
    }
    if (!m.merge.clean) {
      conflict(i, now, { is: 'clash' }, { kind: m.merge.kind, regions: m.merge.conflicts, ...('marked' in m.merge ? { mergedText: m.merge.marked } : {}) });
      continue;
    }
    write(encodeContent(type, m.merge.merged));
    outcomes[i] = { action: 'updated', type, merged: true, unchanged: false };
  }
  return { changes: conflicts.length ? [] : [...removals, ...writes], outcomes, conflicts };
}

/**
 * The three-way merge of `incoming` (decoded content written against `baseVersion` of `node`)
 * with what the node holds now; `typeChanged` when the node's type is no longer the base's.
 */
export async function threeWay(
  store: Pick<ContentStore, 'versionContent' | 'readContent'>,
  projectId: string,
  node: NodeInfo,
  incoming: unknown,
  baseVersion: number,
): Promise<{ typeChanged: NodeType } | { merge: NodeMerge; sides: MergeSides }> {
  const [base, current] = await Promise.all([store.versionContent(projectId, { id: node.id }, baseVersion), store.readContent(projectId, { id: node.id })]);
  if (base.version.type !== node.type) return { typeChanged: base.version.type };
  const sides: MergeSides = {
    type: node.type,
    base: decodeContent(node.type, base.bytes),
    current: decodeContent(node.type, current.bytes),
    incoming,
    baseVersion,
    currentVersion: node.version,
  };
  return { merge: mergeNode(sides), sides };
}

/**
 * What was at `path` at `projectVersion`, as far as the index tells: the node there now if it was
 * there then, else one that has moved or been deleted from there since. Nothing found: `nodeId` null.
 */
export function seenAt(store: Pick<ContentStore, 'findByPath' | 'projectVersion' | 'changesBetween' | 'versionAtProjectVersion'>, projectId: string, path: string, projectVersion: number): Seen {
  const then = (id: string) => {
    const v = store.versionAtProjectVersion(projectId, { id }, projectVersion);
    return v && v.path === path ? v : null;
  };
  const now = store.findByPath(projectId, path);
  let found = now && now.state === 'active' ? then(now.id) : null;
  const head = store.projectVersion(projectId);
  if (!found && head > projectVersion) {
    for (const c of store.changesBetween(projectId, projectVersion, head)) {
      if (c.oldPath !== path && c.path !== path) continue;
      found = then(c.nodeId);
      if (found) break;
    }
  }
  return found ? { nodeId: found.nodeId, version: found.version, projectVersion } : { nodeId: null, version: null, projectVersion };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The folders above a path, top down. */
function foldersAbove(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
