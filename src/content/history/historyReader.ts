import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { CommitData } from '../git/commitObject.ts';
import type { Repo } from '../git/repo.ts';
import type { IndexStore } from '../indexStore.ts';
import type { PushExpectations } from '../pushExpectations.ts';
import type { DiffPlan, TypeAt } from './treeDiff.ts';

/** What reconciling a project's index with its git history needs. */
export interface ReconcileDeps {
  projectId: string;
  db: Db;
  index: IndexStore;
  repo: Repo;
  logger?: Logger;
  /** The system git, used to read history in bulk; null or absent: isomorphic-git only. */
  gitBinary?: string | null;
  /** Called when `gitBinary` turns out not to be installed (then isomorphic-git is used). */
  onGitMissing?: () => void;
  /** Pushes accepted by the git remote: their commits get the pusher as actor. */
  pushes?: PushExpectations;
  /** Throws unless this process still owns the project (several workers: its lease); run in each write transaction. */
  fence?: () => void;
}

/** A commit of the first-parent chain, read. */
export interface ChainCommit {
  id: string;
  commit: CommitData;
}

/** Where replay reads history from. */
export interface History {
  /** First-parent chain from `tip` back to `stop` (exclusive), oldest first; `reached`: stop was met. */
  chain(tip: string | null, stop: string | null): Promise<{ ids: string[]; reached: boolean }>;
  commits(ids: string[]): Promise<ChainCommit[]>;
  /**
   * Plans of commits without trailers (diffs against their first parent), by commit id.
   * `typeAt(path)`: the type of the file indexed at a path now (its new content is checked
   * against it, so that a json or markdown node keeps its type while the content fits).
   */
  plans(commits: ChainCommit[], typeAt: TypeAt): Promise<Map<string, DiffPlan>>;
  /** Sets folder content hashes (tree ids) from the final tree. */
  refreshFolderHashes(rootTree: string): Promise<void>;
}
