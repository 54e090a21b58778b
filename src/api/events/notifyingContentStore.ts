import { ContentStore, type Actor, type CommitOptions, type CommitResult, type Mutation, type SyncReport } from '../../content/contentStore.ts';

export type CommitListener = (projectId: string) => void;

/**
 * The content store that tells listeners when new commits are indexed: after every write call
 * resolves (every named operation goes through `commit`) and after git pushes are indexed
 * (`syncFromGit`). Listeners read what changed from the index (the changelog), so one call per
 * batch or per push is enough, and commits indexed implicitly before a write are reported with it.
 */
export class NotifyingContentStore extends ContentStore {
  private readonly listeners = new Set<CommitListener>();

  onCommitted(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  override async commit(projectId: string, actor: Actor, mutations: Mutation[], options: CommitOptions = {}): Promise<CommitResult> {
    const result = await super.commit(projectId, actor, mutations, options);
    if (result.changed) this.emit(projectId);
    return result;
  }

  override async syncFromGit(projectId: string, options: { actor?: Actor } = {}): Promise<SyncReport> {
    const report = await super.syncFromGit(projectId, options);
    if (report.indexedCommits > 0) this.emit(projectId);
    return report;
  }

  private emit(projectId: string): void {
    for (const l of this.listeners) {
      try {
        l(projectId);
      } catch {
        /* a listener's failure must not fail the write that already happened */
      }
    }
  }
}
