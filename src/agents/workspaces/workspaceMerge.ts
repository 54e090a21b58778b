import { commitMerge } from '../../collab/commitMerge.ts';
import { conflictAnswer, MergeConflictError, type IncomingChange, type Wording } from '../../collab/mergeChanges.ts';
import type { Actor, ContentStore, WritableNodeType } from '../../content/contentStore.ts';
import type { DraftRow } from './workspaceStore.ts';

/** One path the completion wrote. */
export interface CompletedChange {
  path: string;
  action: 'created' | 'updated' | 'deleted';
  type: WritableNodeType | 'folder';
  /** True when the draft was merged three ways with live changes made since its base. */
  merged: boolean;
}

/** How a workspace's conflicts are told (the shared merge decides them). */
const workspaceWording: Wording = (s) => {
  switch (s.is) {
    case 'removed-replaced':
      return 'deleted in the workspace, but another node is there live now';
    case 'removed-changed':
      return `deleted in the workspace, but changed live since (version ${s.baseVersion} → ${s.currentVersion})`;
    case 'blocked':
      return `${s.at} is a file live now, where the workspace has a folder`;
    case 'kind-replaced':
      return `the workspace has a ${s.mine} here, and the live ${s.mine === 'folder' ? 'file' : 'folder'} changed since`;
    case 'gone':
      return 'changed in the workspace, but deleted or moved live since';
    case 'both-created':
      return 'created in the workspace and, with other content, live since';
    case 'other-node':
      return 'changed in the workspace, but the node there live is another one now';
    case 'type-changed':
      return `the node changed type from ${s.from} to ${s.to} live`;
    case 'clash':
      return 'changed in the workspace and live, in the same places';
  }
};

/** A drafted path as a change against what the draft started from. */
function changeOf(row: DraftRow): IncomingChange {
  const seen = { nodeId: row.baseNodeId, version: row.baseVersion, projectVersion: row.baseProjectVersion };
  if (row.action === 'deleted') return { op: 'remove', path: row.path, type: row.type, seen };
  if (row.type === 'folder') return { op: 'mkdir', path: row.path, seen };
  return { op: 'write', path: row.path, type: row.type, bytes: row.content ?? Buffer.alloc(0), seen };
}

/**
 * Writes the draft into the live content as ONE commit by `actor`: each drafted path is a change
 * against the live node it was drafted from, merged by the shared merge (src/collab/mergeChanges.ts)
 * against the tip inside the project's serialized section. Unchanged live, the draft is written;
 * changed live, the two are merged three ways. Any conflict writes nothing and throws
 * MergeConflictError (409) with every conflict.
 */
export async function completeDraft(content: ContentStore, projectId: string, actor: Actor, rows: readonly DraftRow[], message: string): Promise<{ version: number | null; changes: CompletedChange[] }> {
  const incoming = rows.map(changeOf);
  const { plan, result } = await commitMerge(content, projectId, actor, { message, wording: workspaceWording, changes: () => incoming });
  if (plan.conflicts.length) {
    throw new MergeConflictError(`${plan.conflicts.length} path(s) of the workspace could not be merged with the live content; nothing was written and the workspace is kept`, {
      conflicts: plan.conflicts.map(conflictAnswer),
    });
  }
  if (!result?.changed) return { version: null, changes: [] };
  // Deletions first, then the rest, each by path (the rows' order).
  const order = [...incoming.keys()].sort((a, b) => Number(incoming[b]!.op === 'remove') - Number(incoming[a]!.op === 'remove'));
  const changes = order.flatMap((i): CompletedChange[] => {
    const o = plan.outcomes[i];
    return o && !o.unchanged ? [{ path: rows[i]!.path, action: o.action, type: o.type, merged: o.merged }] : [];
  });
  return { version: result.projectVersion, changes };
}
