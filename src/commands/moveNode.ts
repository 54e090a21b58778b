import type { ContentStore, NodeInfo, WriteResult } from '../content/contentStore.ts';
import { joinPath } from '../content/paths.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

export interface MovedNode extends WriteResult {
  /** Where the node was. */
  from: string;
}

/** Moves or renames the node at `from` to `to` (a folder with everything beneath it, ids and histories kept). */
export async function moveNode(d: { content: Pick<ContentStore, 'move'> }, g: ContentGrant, input: ChangeNote & { from: string; to: string }): Promise<MovedNode> {
  const r = await d.content.move(g.projectId, g.actor, input.from, input.to, { message: messageOf(input, `move ${input.from} to ${input.to}`) });
  return { ...r, from: input.from };
}

/**
 * Moves `node` into `folder` (null path and id: the project root), keeping its name. The path it
 * lands at must lie in the caller's scope; the store refuses a folder moved into itself and a
 * node or folder that moved meanwhile.
 */
export async function moveNodeInto(
  d: { content: Pick<ContentStore, 'moveNode'>; access: Pick<ContentAccess, 'requirePath'> },
  g: ContentGrant,
  input: ChangeNote & { node: NodeInfo; folder: { id: string | null; path: string } },
): Promise<MovedNode> {
  d.access.requirePath(g, joinPath(input.folder.path, input.node.name));
  const r = await d.content.moveNode(g.projectId, g.actor, input.node.id, input.folder.id, { message: input.message });
  return { ...r, from: input.node.path };
}
