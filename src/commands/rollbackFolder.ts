import type { CommitResult, ContentStore, NodeInfo } from '../content/contentStore.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';

/**
 * Returns everything beneath a folder to its state at a snapshot (named by its commit id) or a
 * project version, as one commit: changed nodes get a rollback version, trashed ones come back,
 * nodes created since go to the trash. Nothing outside the folder changes.
 */
export function rollbackFolder(
  d: { content: Pick<ContentStore, 'rollbackFolder'> },
  g: ContentGrant,
  input: { folder: NodeInfo; to: { commitId: string } | { projectVersion: number }; message?: string },
): Promise<CommitResult> {
  return d.content.rollbackFolder(g.projectId, g.actor, input.folder.id, input.to, { message: input.message });
}
