import { z } from 'zod';
import type { MovedNode } from '../commands/moveNode.ts';
import type { RemovedNode } from '../commands/removeNode.ts';
import type { NodeRollback } from '../commands/rollbackNode.ts';
import type { PathRollback } from '../commands/rollbackPath.ts';
import type { WriteResult } from '../content/contentStore.ts';
import { presentContent } from './content.ts';
import { nodePresenter, type IdPathReader, type NodePresenter } from './idPaths.ts';
import { entrySchema } from './node.ts';

/**
 * The answers of changes that REST's path routes and MCP's tools share (an MCP tool may add the
 * project version where the route does not). Nodes are shown as on the path surface.
 */

export const presentFolderMade = (p: NodePresenter, r: WriteResult) => ({ ...p.node(r.node), changed: r.changed });

export const presentMove = (p: NodePresenter, r: MovedNode) => ({ ...p.node(r.node), old_path: r.from, new_path: r.node.path, changed: r.changed });

export function presentRemoval(r: RemovedNode) {
  const trashPath = r.trashed?.path ?? null;
  // old_path/new_path/version: PuppyOne's names (new_path is the place in the trash; version the project version)
  return { id: r.node.id, path: r.node.path, permanent: r.permanent, trash_path: trashPath, project_version: r.projectVersion, old_path: r.node.path, new_path: trashPath, version: r.projectVersion };
}

/** A node rolled back to one of its versions, with its content (json, markdown): an answer about one node whose content the request set. */
export function presentNodeRollback(store: IdPathReader, r: NodeRollback) {
  const content = r.bytes ? presentContent(r.node.type, r.bytes) : {};
  const node = nodePresenter(store, 'path').node(r.node);
  // new_version/rolled_back_to: PuppyOne's names for the node's version now and the one restored
  return { ...node, ...content, changed: r.changed, restored_version: r.restoredVersion, project_version: r.projectVersion, new_version: node.version, rolled_back_to: r.restoredVersion };
}

/** A path rolled back to a project version: the node as above, or the folder's changed nodes. */
export function presentPathRollback(store: IdPathReader, r: PathRollback) {
  if ('node' in r) return { ...presentNodeRollback(store, r.node), target_version: r.targetVersion };
  const p = nodePresenter(store, 'path');
  const f = r.folder;
  return {
    path: r.path,
    target_version: r.targetVersion,
    changed: f.changed,
    project_version: f.projectVersion,
    commit_id: f.commitId,
    nodes: f.nodes.map((n) => p.node(n)),
    new_version: f.projectVersion,
    rolled_back_to: r.targetVersion,
  };
}

// What the presenters above answer, for the response schemas of the OpenAPI document.

export const nodeRollbackSchema = entrySchema.extend({
  content: z.unknown().optional(),
  content_text: z.string().optional(),
  changed: z.boolean(),
  restored_version: z.number().int(),
  project_version: z.number().int().nullable(),
  new_version: z.number().int().describe("the node's version now, by the name PuppyOne clients read"),
  rolled_back_to: z.number().int().describe('restored_version, by the name PuppyOne clients read'),
});
