import type { Actor, ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { diffVersions } from '../../content/versionDiff.ts';
import { presentContent, presentVersion } from '../presenters/content.ts';
import { nodePresenter } from './idPaths.ts';

/**
 * A node's history as both surfaces answer it (path routes of 4.1, id routes of 4.2 and 4.3):
 * one implementation, so the same node gives the same answer whichever way it is addressed.
 */

export function versionListOf(store: ContentStore, node: NodeInfo, options: { limit?: number; sinceVersion?: number }) {
  const list = store.listVersions(node.projectId, { id: node.id }, options);
  return { id: node.id, path: node.path, versions: list.versions.map(presentVersion), total: list.total, current_version: list.currentVersion };
}

/** One version's record with its complete content (none for folder versions). */
export async function versionWithContent(store: ContentStore, node: NodeInfo, version: number) {
  const v = store.getVersion(node.projectId, { id: node.id }, version);
  const base = { id: node.id, ...presentVersion(v) };
  if (!v.blobId) return base;
  const { bytes } = await store.versionContent(node.projectId, { id: node.id }, version);
  return { ...base, ...presentContent(v.type, bytes) };
}

export async function versionDiffOf(store: ContentStore, node: NodeInfo, v1: number, v2: number) {
  const [a, b] = await Promise.all([
    store.versionContent(node.projectId, { id: node.id }, v1),
    store.versionContent(node.projectId, { id: node.id }, v2),
  ]);
  const diff = diffVersions(node.path, { version: v1, type: a.version.type, bytes: a.bytes }, { version: v2, type: b.version.type, bytes: b.bytes });
  return { id: node.id, path: node.path, v1, v2, ...diff };
}

/**
 * What a node rollback answers (a new version with the content of `version`): the node with its
 * content, as an answer about one node whose content the request set (README "API conventions").
 */
export async function rollbackNodeTo(store: ContentStore, node: NodeInfo, actor: Actor, version: number, message?: string) {
  const result = await store.rollbackNode(node.projectId, actor, { id: node.id }, version, { message });
  const content = result.node.type === 'json' || result.node.type === 'markdown'
    ? presentContent(result.node.type, (await store.readContent(result.node.projectId, { id: result.node.id })).bytes)
    : {};
  return {
    data: { ...nodePresenter(store, 'path').node(result.node), ...content, changed: result.changed, restored_version: version, project_version: result.projectVersion },
    message: `Rolled back to version ${version}`,
  };
}
