import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { ConflictError } from '../errors/contentErrors.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

export interface RemoveNodeInput extends ChangeNote {
  /** The node by path, or as the caller found it by id (it must not be in the trash already). */
  target: { path: string } | { node: NodeInfo };
  /** Delete it with its history instead of moving it to the trash. */
  permanent?: boolean;
}

export interface RemovedNode {
  /** The node as it was. */
  node: NodeInfo;
  permanent: boolean;
  /** The node in the trash (`.trash/<id>_<name>`); null when it was deleted for good. */
  trashed: NodeInfo | null;
  projectVersion: number | null;
}

/**
 * Moves a node (a folder with everything beneath it) to the trash, keeping its id and history,
 * or deletes it permanently. Removing what is already in the trash deletes it permanently.
 */
export async function removeNode(d: { content: Pick<ContentStore, 'getByPath' | 'getById' | 'remove'> }, g: ContentGrant, input: RemoveNodeInput): Promise<RemovedNode> {
  const { content } = d;
  const before = 'node' in input.target ? input.target.node : content.getByPath(g.projectId, input.target.path);
  if ('node' in input.target && before.state !== 'active') throw new ConflictError('The node is already in the trash.', { id: before.id });
  const permanent = input.permanent ?? false;
  const r = await content.remove(g.projectId, g.actor, before.path, { permanent, message: messageOf(input, `${permanent ? 'delete' : 'trash'} ${before.path}`) });
  const trashed = permanent || before.state !== 'active' ? null : (r.nodes.find((n) => n.id === before.id) ?? content.getById(g.projectId, before.id));
  return { node: before, permanent, trashed, projectVersion: r.projectVersion };
}
