import type { Actor, CommitResult, ContentStore } from '../content/contentStore.ts';
import { planMerge, type IncomingChange, type MergePlan, type MergeReads, type Wording } from './mergeChanges.ts';

export interface MergeCommit {
  message: string;
  /**
   * The changes to merge, asked inside the project's serialized section against the tip (what
   * they depend on, such as a node's type or the writer's rights, is as of the commit). It may
   * throw: nothing is written. It is asked again should main move under it (a direct push).
   */
  changes: () => readonly IncomingChange[] | Promise<readonly IncomingChange[]>;
  wording: Wording;
}

/**
 * Merges changes into the current content as ONE commit by `actor`, planned and written in the
 * project's serialized section (`ContentStore.commitPlanned`): no other write comes between the
 * plan and the commit, so nothing is lost and nothing is retried. With conflicts nothing is
 * written (`result` null); so also when there is nothing to write.
 */
export async function commitMerge(store: MergeReads & Pick<ContentStore, 'commitPlanned'>, projectId: string, actor: Actor, m: MergeCommit): Promise<{ plan: MergePlan; result: CommitResult | null }> {
  const last: { plan: MergePlan } = { plan: { changes: [], outcomes: [], conflicts: [] } };
  const result = await store.commitPlanned(projectId, actor, async () => {
    const plan = await planMerge(store, projectId, await m.changes(), m.wording);
    last.plan = plan;
    return plan.conflicts.length || plan.changes.length === 0 ? null : { message: m.message, parents: [], changes: plan.changes };
  });
  return { plan: last.plan, result };
}
