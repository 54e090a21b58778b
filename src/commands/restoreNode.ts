import type { ContentStore, WriteResult } from '../content/contentStore.ts';
import { DomainError } from '../errors/domainError.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

export interface RestoreNodeInput extends ChangeNote {
  trashPath: string;
  /** Where it goes back to (409 when taken). */
  originalPath: string;
}

/**
 * Moves a top-level trash item back to a path. A scoped caller restores only what was deleted
 * from inside its scope: any other trash item is "not found", whatever it is.
 */
export async function restoreNode(
  d: { content: Pick<ContentStore, 'listTrash' | 'restore'>; access: Pick<ContentAccess, 'visibleTrash'> },
  g: ContentGrant,
  input: RestoreNodeInput,
): Promise<WriteResult & { from: string }> {
  if (g.scope !== '' && !d.access.visibleTrash(g, d.content.listTrash(g.projectId)).some((t) => t.trashPath === input.trashPath)) {
    throw new DomainError('NOT_FOUND', 'Trash item not found.');
  }
  const r = await d.content.restore(g.projectId, g.actor, input.trashPath, input.originalPath, {
    message: messageOf(input, `restore ${input.trashPath} to ${input.originalPath}`),
  });
  return { ...r, from: input.trashPath };
}
