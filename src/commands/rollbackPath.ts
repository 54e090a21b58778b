import type { CommitResult, ContentStore } from '../content/contentStore.ts';
import { NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';
import { rollbackFolder } from './rollbackFolder.ts';
import { rollbackNode, type NodeRollback } from './rollbackNode.ts';

export type PathRollback = { path: string; targetVersion: number } & ({ folder: CommitResult } | { node: NodeRollback });

/**
 * Returns one path (a node, or a folder with everything beneath it) to its state at project
 * version `targetVersion`, as one commit; nothing outside the path changes. A node must have
 * existed there, outside the trash, at that version.
 */
export async function rollbackPath(
  d: { content: Pick<ContentStore, 'getByPath' | 'projectVersion' | 'versionAtProjectVersion' | 'rollbackFolder' | 'rollbackNode' | 'readContent'> },
  g: ContentGrant,
  input: ChangeNote & { path: string; targetVersion: number },
): Promise<PathRollback> {
  const { content } = d;
  const { path, targetVersion: target } = input;
  const node = content.getByPath(g.projectId, path);
  if (target > content.projectVersion(g.projectId)) throw new NotFoundError(`project version ${target} does not exist`, { target_version: target });
  const message = messageOf(input, `rollback ${path} to project version ${target}`);
  if (node.type === 'folder') {
    return { path, targetVersion: target, folder: await rollbackFolder(d, g, { folder: node, to: { projectVersion: target }, message }) };
  }
  const at = content.versionAtProjectVersion(g.projectId, { id: node.id }, target);
  if (!at) throw new ValidationError(`${path} did not exist at project version ${target}`, { target_version: target });
  if (at.path.startsWith('.trash/')) throw new ValidationError(`${path} was in the trash at project version ${target}`, { target_version: target });
  return { path, targetVersion: target, node: await rollbackNode(d, g, { node, version: at.version, message }) };
}
