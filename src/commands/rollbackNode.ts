import type { ContentStore, NodeInfo, WriteResult } from '../content/contentStore.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

export interface NodeRollback extends WriteResult {
  /** The version whose content the new version has. */
  restoredVersion: number;
  /** The content now (json and markdown: an answer about one node whose content the request set carries it). */
  bytes: Buffer | null;
}

/** A new version of `node` with the content (and type) of one of its versions. */
export async function rollbackNode(
  d: { content: Pick<ContentStore, 'rollbackNode' | 'readContent'> },
  g: ContentGrant,
  input: ChangeNote & { node: NodeInfo; version: number },
): Promise<NodeRollback> {
  const { node, version } = input;
  const r = await d.content.rollbackNode(node.projectId, g.actor, { id: node.id }, version, { message: messageOf(input, `rollback ${node.path} to version ${version}`) });
  const readable = r.node.type === 'json' || r.node.type === 'markdown';
  const bytes = readable ? (await d.content.readContent(r.node.projectId, { id: r.node.id })).bytes : null;
  return { ...r, restoredVersion: version, bytes };
}
