import { ConflictError, ValidationError, type Actor, type ContentStore, type NodeInfo } from '../content/contentStore.ts';
import { encodeContent } from '../content/encoding.ts';
import { commitMerge } from './commitMerge.ts';
import { markedJson } from './jsonMerge.ts';
import { conflictAnswer, MergeConflictError, threeWay, type IncomingChange, type Wording } from './mergeChanges.ts';

export { MergeConflictError } from './mergeChanges.ts';

export interface CollabMutation {
  nodeId: string;
  /** Decoded content: a JSON value, markdown text, or bytes for files. */
  content: unknown;
  message?: string;
  /** The version the client's content was based on (from checkout); absent = overwrite. */
  baseVersion?: number;
}

export interface CommittedNode {
  node: NodeInfo;
  baseVersion: number | null;
  /** True when the content was three-way merged with changes made since base_version. */
  merged: boolean;
}

/** Collab merges nodes by id, in place: of the shared merge's reasons only a change of type can occur. */
const collabWording: Wording = (s) => (s.is === 'type-changed' ? `the node changed type from ${s.from} to ${s.to}` : s.is);

/**
 * Commits several nodes' new content as ONE commit. A node that moved past the client's
 * base_version is merged three ways (base version, current version, incoming content); a clean
 * merge is written, a conflict anywhere rejects the whole commit with every node's conflicts.
 * The merge is planned against the tip inside the project's serialized section (commitMerge),
 * so a concurrent write is never lost: it is the current version merged with.
 */
export async function collabCommit(store: ContentStore, projectId: string, actor: Actor, mutations: CollabMutation[]) {
  const ids = new Set<string>();
  for (const [i, m] of mutations.entries()) {
    if (ids.has(m.nodeId)) throw new ValidationError(`node ${m.nodeId} appears twice`, { index: i, node_id: m.nodeId });
    ids.add(m.nodeId);
  }
  const message = [...new Set(mutations.map((m) => m.message?.trim()).filter(Boolean))].join('\n') || `collab commit of ${mutations.length} nodes`;
  const { plan, result } = await commitMerge(store, projectId, actor, {
    message,
    wording: collabWording,
    changes: () =>
      mutations.map((m, i): IncomingChange => {
        const node = nodeToMerge(store, projectId, m.nodeId, m.baseVersion);
        const bytes = encoded(node, m.content, mutations.length > 1 ? i : undefined);
        return { op: 'write', path: node.path, type: node.type as Exclude<NodeInfo['type'], 'folder'>, bytes, seen: m.baseVersion === undefined ? null : { nodeId: node.id, version: m.baseVersion } };
      }),
  });
  if (plan.conflicts.length) {
    throw new MergeConflictError(`${plan.conflicts.length} node(s) could not be merged; nothing was written`, { conflicts: plan.conflicts.map(conflictAnswer) });
  }
  const nodes: CommittedNode[] = mutations.map((m, i) => ({
    node: store.getById(projectId, m.nodeId),
    baseVersion: m.baseVersion ?? null,
    merged: plan.outcomes[i]?.merged ?? false,
  }));
  return { changed: result?.changed ?? false, projectVersion: result?.projectVersion ?? null, commitId: result?.commitId ?? null, nodes };
}

/** A node whose content may be merged: active, not a folder, at or past `baseVersion`. */
function nodeToMerge(store: ContentStore, projectId: string, nodeId: string, baseVersion: number | undefined): NodeInfo {
  const node = store.getById(projectId, nodeId);
  if (node.state !== 'active') throw new ConflictError(`${node.path} is in the trash`, { node_id: node.id });
  if (node.type === 'folder') throw new ValidationError('folders have no content', { node_id: node.id });
  if (baseVersion !== undefined && baseVersion > node.version) {
    throw new ValidationError(`base_version ${baseVersion} is newer than the node (version ${node.version})`, { node_id: node.id });
  }
  return node;
}

/** The content as the node stores it; a bad one names its mutation (as the store names a mutation of several). */
function encoded(node: NodeInfo, content: unknown, index: number | undefined): Buffer {
  try {
    return encodeContent(node.type as Exclude<NodeInfo['type'], 'folder'>, content);
  } catch (e) {
    if (index !== undefined && e instanceof ValidationError) e.details.index = index;
    throw e;
  }
}

/** What a merge preview answers: the merge, and for a person to resolve the conflicts, the merged text with markers. */
export interface MergePreview {
  node: NodeInfo;
  baseVersion: number;
  clean: boolean;
  /** The merged content (decoded), when clean. */
  merged: unknown;
  /** Markdown: the merged text, with git-style markers at conflicts; json: the document in its stored form, marked likewise; files: null. */
  mergedText: string | null;
  conflicts: unknown[];
}

/**
 * The three-way merge a commit of `incoming` against `baseVersion` would make, without writing:
 * what a client shows a person before they choose (the dashboard's conflict dialog). It is the
 * very merge `collabCommit` writes (mergeChanges.ts `threeWay`).
 */
export async function previewMerge(store: ContentStore, projectId: string, nodeId: string, incoming: unknown, baseVersion: number): Promise<MergePreview> {
  const node = nodeToMerge(store, projectId, nodeId, baseVersion);
  const r = await threeWay(store, projectId, node, incoming, baseVersion);
  if ('typeChanged' in r) {
    const reason = collabWording({ is: 'type-changed', from: r.typeChanged, to: node.type });
    return { node, baseVersion, clean: false, merged: null, mergedText: null, conflicts: [{ reason }] };
  }
  const { merge, sides } = r;
  const labels = { base: `base (version ${baseVersion})`, current: `current (version ${node.version})`, incoming: 'incoming' };
  const mergedText = merge.clean
    ? node.type === 'json'
      ? JSON.stringify(merge.merged, null, 2) + '\n'
      : node.type === 'markdown'
        ? (merge.merged as string)
        : null
    : 'marked' in merge
      ? merge.marked
      : merge.kind === 'json'
        ? markedJson(sides.base, sides.current, incoming, labels)
        : null;
  return { node, baseVersion, clean: merge.clean, merged: merge.clean ? merge.merged : null, mergedText, conflicts: merge.clean ? [] : merge.conflicts };
}
