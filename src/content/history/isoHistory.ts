import type { CommitData } from '../git/commitObject.ts';
import type { TreeEntryRaw } from '../git/repo.ts';
import { joinPath, TRASH_DIR } from '../paths.ts';
import { TREE_MODE } from '../tree.ts';
import type { ChainCommit, History, ReconcileDeps } from './historyReader.ts';
import { planDiff, type DiffPlan } from './treeDiff.ts';

/** Object by object through the store's own reader (isomorphic-git for packed objects). */
export class IsoHistory implements History {
  private readonly seen = new Map<string, CommitData>();
  private readonly trees = new Map<string, string>();
  private lastId: string | null = null;

  constructor(private readonly deps: ReconcileDeps) {}

  private async read(id: string): Promise<CommitData> {
    let c = this.seen.get(id);
    if (!c) {
      c = await this.deps.repo.readCommit(id);
      this.seen.set(id, c);
    }
    return c;
  }

  async chain(tip: string | null, stop: string | null): Promise<{ ids: string[]; reached: boolean }> {
    const ids: string[] = [];
    let c = tip;
    while (c && c !== stop) {
      ids.push(c);
      c = (await this.read(c)).parents[0] ?? null;
    }
    return { ids: ids.reverse(), reached: c === stop };
  }

  async commits(ids: string[]): Promise<ChainCommit[]> {
    // Trees of this round's commits (and of the one before it): the parents plans() diffs against.
    const prev = this.lastId ? this.trees.get(this.lastId) : undefined;
    this.trees.clear();
    if (this.lastId && prev) this.trees.set(this.lastId, prev);
    const out: ChainCommit[] = [];
    for (const id of ids) {
      const commit = await this.read(id);
      out.push({ id, commit });
      this.seen.delete(id);
      this.trees.set(id, commit.tree);
      this.lastId = id;
    }
    return out;
  }

  async plans(commits: ChainCommit[]): Promise<Map<string, DiffPlan>> {
    const plans = new Map<string, DiffPlan>();
    for (const c of commits) {
      const parent = c.commit.parents[0];
      const from = parent ? (this.trees.get(parent) ?? (await this.deps.repo.readCommit(parent)).tree) : null;
      plans.set(c.id, await planDiff(this.deps.repo, from, c.commit.tree));
    }
    return plans;
  }

  refreshFolderHashes(rootTree: string): Promise<void> {
    return refreshFolderHashes(this.deps, rootTree);
  }
}

/** Sets folder content hashes (tree ids) from a tree, skipping subtrees whose id is already right. */
async function refreshFolderHashes(deps: ReconcileDeps, rootTree: string): Promise<void> {
  const updates: [string, string][] = [];
  const walk = async (entries: TreeEntryRaw[], path: string) => {
    for (const e of entries) {
      if (e.mode !== TREE_MODE) continue;
      const p = joinPath(path, e.name);
      if (p !== TRASH_DIR) {
        const row = deps.index.rowAt(deps.projectId, p, true);
        if (!row || row.content_hash === e.oid) continue;
        updates.push([p, e.oid]);
      }
      await walk(await deps.repo.readTree(e.oid), p);
    }
  };
  await walk(await deps.repo.readTree(rootTree), '');
  if (updates.length === 0) return;
  deps.db.transaction(() => {
    for (const [p, oid] of updates) deps.index.setFolderHash(deps.projectId, p, oid);
  }).immediate();
}
