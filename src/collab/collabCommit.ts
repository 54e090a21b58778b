import { ConflictError, decodeContent, ValidationError, type Actor, type ContentStore, type Mutation, type NodeInfo } from '../content/contentStore.ts';
import { markedJson } from './jsonMerge.ts';
import { mergeNode, type NodeMerge } from './threeWayMerge.ts';

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

/** Thrown (as a 409) when any node does not merge cleanly; nothing has been written. */
export class MergeConflictError extends ConflictError {}

/** How often a commit is re-planned when another writer gets in between the merge and the commit. */
const ATTEMPTS = 3;

/**
 * Commits several nodes' new content as ONE commit. A node that moved past the client's
 * base_version is merged three ways (base version, current version, incoming content); a clean
 * merge is written, a conflict anywhere rejects the whole commit with every node's conflicts.
 * Every write carries the version it was merged against, so a concurrent write cannot be lost:
 * the store refuses it and the merge is redone against the newer version.
 */
export async function collabCommit(store: ContentStore, projectId: string, actor: Actor, mutations: CollabMutation[]) {
  const ids = new Set<string>();
  for (const [i, m] of mutations.entries()) {
    if (ids.has(m.nodeId)) throw new ValidationError(`node ${m.nodeId} appears twice`, { index: i, node_id: m.nodeId });
    ids.add(m.nodeId);
  }
  const message = [...new Set(mutations.map((m) => m.message?.trim()).filter(Boolean))].join('\n') || `collab commit of ${mutations.length} nodes`;
  for (let attempt = 1; ; attempt++) {
    const plan = await planCommit(store, projectId, mutations);
    try {
      const result = await store.commit(projectId, actor, plan.writes, { message });
      const nodes: CommittedNode[] = mutations.map((m, i) => ({
        node: store.getById(projectId, m.nodeId),
        baseVersion: m.baseVersion ?? null,
        merged: plan.merged[i],
      }));
      return { changed: result.changed, projectVersion: result.projectVersion, commitId: result.commitId, nodes };
    } catch (e) {
      const raced = e instanceof ConflictError && !(e instanceof MergeConflictError) && 'current_version' in e.details;
      if (!raced || attempt >= ATTEMPTS) throw e;
    }
  }
}

async function planCommit(store: ContentStore, projectId: string, mutations: CollabMutation[]) {
  const writes: Mutation[] = [];
  const merged: boolean[] = [];
  const conflicts: Record<string, unknown>[] = [];
  for (const m of mutations) {
    const node = store.getById(projectId, m.nodeId);
    if (node.state !== 'active') throw new ConflictError(`${node.path} is in the trash`, { node_id: node.id });
    if (node.type === 'folder') throw new ValidationError('folders have no content', { node_id: node.id });
    let content = m.content;
    const behind = m.baseVersion !== undefined && m.baseVersion !== node.version;
    if (behind) {
      const r = await mergeWithCurrent(store, projectId, node, m.content, m.baseVersion!);
      if (!r.merge.clean) {
        conflicts.push({ ...r.where, kind: r.merge.kind, regions: r.merge.conflicts, ...('marked' in r.merge ? { merged_text: r.merge.marked } : {}) });
        continue;
      }
      content = r.merge.merged;
    }
    writes.push({ op: 'write', path: node.path, type: node.type, content, baseVersion: node.version });
    merged.push(behind);
  }
  if (conflicts.length) {
    throw new MergeConflictError(`${conflicts.length} node(s) could not be merged; nothing was written`, { conflicts });
  }
  return { writes, merged };
}

/** `incoming`, written against `baseVersion`, merged three ways with what the node holds now. */
async function mergeWithCurrent(store: ContentStore, projectId: string, node: NodeInfo, incoming: unknown, baseVersion: number) {
  if (baseVersion > node.version) {
    throw new ValidationError(`base_version ${baseVersion} is newer than the node (version ${node.version})`, { node_id: node.id });
  }
  const [base, current] = await Promise.all([store.versionContent(projectId, { id: node.id }, baseVersion), store.readContent(projectId, { id: node.id })]);
  const where = { node_id: node.id, path: node.path, type: node.type, base_version: baseVersion, current_version: node.version };
  const sides = {
    type: node.type,
    base: decodeContent(node.type, base.bytes),
    current: decodeContent(node.type, current.bytes),
    incoming,
    baseVersion,
    currentVersion: node.version,
  };
  const merge: NodeMerge =
    base.version.type !== node.type
      ? { clean: false, kind: 'type', conflicts: [{ reason: `the node changed type from ${base.version.type} to ${node.type}` }] }
      : mergeNode(sides);
  return { where, merge, sides };
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
 * very merge `collabCommit` writes.
 */
export async function previewMerge(store: ContentStore, projectId: string, nodeId: string, incoming: unknown, baseVersion: number): Promise<MergePreview> {
  const node = store.getById(projectId, nodeId);
  if (node.state !== 'active') throw new ConflictError(`${node.path} is in the trash`, { node_id: node.id });
  if (node.type === 'folder') throw new ValidationError('folders have no content', { node_id: node.id });
  const { merge, sides } = await mergeWithCurrent(store, projectId, node, incoming, baseVersion);
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
