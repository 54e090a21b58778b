import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { presentNode } from './presenter.ts';

/**
 * A node with its content when wanted: single-node answers carry json and markdown content by
 * default, lists only when `include_content` is true, file bytes only when explicitly asked.
 */
export async function nodeWithContent(store: ContentStore, node: NodeInfo, include: boolean | undefined, byDefault: boolean) {
  if (node.type === 'folder' || !node.contentHash) return presentNode(node);
  const wanted = node.type === 'file' ? include === true : (include ?? byDefault);
  if (!wanted) return presentNode(node);
  const { bytes } = await store.readContent(node.projectId, { id: node.id });
  return presentNode(node, bytes);
}

export function nodesWithContent(store: ContentStore, nodes: NodeInfo[], include: boolean | undefined) {
  if (include !== true) return Promise.resolve(nodes.map((n) => presentNode(n)));
  return Promise.all(nodes.map((n) => nodeWithContent(store, n, true, true)));
}
