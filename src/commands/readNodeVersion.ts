import type { ContentStore, NodeInfo, VersionInfo } from '../content/contentStore.ts';

export interface NodeVersion {
  node: NodeInfo;
  version: VersionInfo;
  /** The version's complete content; null for a folder's versions. */
  bytes: Buffer | null;
}

/** One version of a node with its content. */
export async function readNodeVersion(d: { content: Pick<ContentStore, 'getVersion' | 'versionContent'> }, node: NodeInfo, version: number): Promise<NodeVersion> {
  const v = d.content.getVersion(node.projectId, { id: node.id }, version);
  if (!v.blobId) return { node, version: v, bytes: null };
  const { bytes } = await d.content.versionContent(node.projectId, { id: node.id }, version);
  return { node, version: v, bytes };
}
