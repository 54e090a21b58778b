import type { CommitResult, ContentStore } from '../content/contentStore.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';

/**
 * Returns the whole tree to its state at project version `targetVersion`, as one commit (see
 * ContentStore.rollbackProject). Only a grant over the whole project may.
 */
export async function rollbackProject(
  d: { content: Pick<ContentStore, 'rollbackProject'>; access: Pick<ContentAccess, 'requireWholeProject'> },
  g: ContentGrant,
  input: { targetVersion: number; message?: string },
): Promise<CommitResult & { targetVersion: number }> {
  d.access.requireWholeProject(g, 'Rolling back the whole project');
  const r = await d.content.rollbackProject(g.projectId, g.actor, input.targetVersion, { message: input.message });
  return { ...r, targetVersion: input.targetVersion };
}
