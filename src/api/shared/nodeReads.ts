import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { AppError } from '../../http/errors.ts';
import { IdPaths } from '../../presenters/idPaths.ts';
import { presentNode } from '../../presenters/node.ts';

/** Files larger than this are not inlined as base64; their download address serves them. */
const INLINE_FILE_BYTES = 10 * 1024 * 1024;

/**
 * A node with its content when wanted: single-node answers carry json and markdown content by
 * default, lists only when `include_content` is true, file bytes only when explicitly asked.
 */
export async function nodeWithContent(store: ContentStore, node: NodeInfo, include: boolean | undefined, byDefault: boolean, ids = new IdPaths(store)) {
  const present = (bytes?: Buffer) => presentNode(node, 'id', ids.of(node), bytes);
  if (node.type === 'folder' || !node.contentHash) return present();
  const wanted = node.type === 'file' ? include === true : (include ?? byDefault);
  if (!wanted) return present();
  if (node.type === 'file' && node.size > INLINE_FILE_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `Files over ${INLINE_FILE_BYTES} bytes are not inlined; use GET /nodes/${node.id}/download.`, { id: node.id, size: node.size });
  }
  const { bytes } = await store.readContent(node.projectId, { id: node.id });
  return present(bytes);
}

export function nodesWithContent(store: ContentStore, nodes: NodeInfo[], include: boolean | undefined) {
  const ids = new IdPaths(store);
  if (include !== true) return Promise.resolve(nodes.map((n) => presentNode(n, 'id', ids.of(n))));
  return Promise.all(nodes.map((n) => nodeWithContent(store, n, true, true, ids)));
}
