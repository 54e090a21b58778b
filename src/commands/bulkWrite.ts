import type { BulkFile, CommitResult, ContentStore } from '../content/contentStore.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

/**
 * Writes many json, markdown and file nodes as ONE commit, all or nothing (a bad entry names its
 * index). `count` is how many were asked; `nodes` those that changed.
 */
export async function bulkWrite(
  d: { content: Pick<ContentStore, 'bulkWrite'> },
  g: ContentGrant,
  input: ChangeNote & { files: BulkFile[] },
): Promise<CommitResult & { count: number }> {
  const r = await d.content.bulkWrite(g.projectId, g.actor, input.files, { message: messageOf(input, `write ${input.files.length} files`) });
  return { ...r, count: input.files.length };
}
