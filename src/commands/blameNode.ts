import type { ContentStore, NodeBlame, NodeInfo } from '../content/contentStore.ts';

/** Who last changed each line (and, for JSON, each key path) of a version of a node: the current one unless `version` is given. */
export function blameNode(d: { content: Pick<ContentStore, 'blame'> }, node: NodeInfo, version?: number): Promise<NodeBlame> {
  return d.content.blame(node.projectId, { id: node.id }, version);
}
