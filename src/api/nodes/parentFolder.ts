import type { ContentStore } from '../../content/contentStore.ts';
import { notFound, validationError } from '../../http/errors.ts';
import type { ContentGrant } from '../../policies/contentAccess.ts';

/** A folder a new or moved node goes into, by id: the root when none is named. */
export interface TargetFolder {
  id: string | null;
  path: string;
}

/**
 * The folder `parent_id` names in the grant's project (the root when absent): another project's
 * or an unknown id is "Parent folder not found."; a node that is no folder, or a folder in the
 * trash, is refused naming `parent_id`.
 */
export function parentFolder(content: Pick<ContentStore, 'findById'>, g: ContentGrant, parentId: string | null | undefined): TargetFolder {
  if (parentId === null || parentId === undefined) return { id: null, path: '' };
  const folder = content.findById(parentId);
  if (!folder || folder.projectId !== g.projectId) throw notFound('Parent folder');
  if (folder.type !== 'folder') throw validationError('parent_id is not a folder.', [{ field: 'parent_id', message: 'not a folder' }]);
  if (folder.state !== 'active') throw validationError('parent_id is in the trash.', [{ field: 'parent_id', message: 'in the trash' }]);
  return { id: folder.id, path: folder.path };
}
