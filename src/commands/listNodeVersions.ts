import type { ContentStore, NodeInfo, VersionList } from '../content/contentStore.ts';

/** A node's versions, newest first (`limit` at most; `sinceVersion`: only those after it). */
export function listNodeVersions(
  d: { content: Pick<ContentStore, 'listVersions'> },
  node: NodeInfo,
  options: { limit?: number; sinceVersion?: number },
): VersionList & { node: NodeInfo } {
  return { node, ...d.content.listVersions(node.projectId, { id: node.id }, options) };
}
