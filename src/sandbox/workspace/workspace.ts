/**
 * A workspace is a folder on the host holding a project's subtree at one commit, for one
 * sandbox run at a time. After the run, `changes()` compares the folder with what was put
 * there; `release()` returns it to the pool when it is still pristine, or discards it.
 */
export interface Workspace {
  /** Absolute path of the folder (the command's working folder). */
  readonly dir: string;
  readonly projectId: string;
  /** The subtree materialized ('' = the whole project), a project path without slashes at the ends. */
  readonly scope: string;
  /** The commit the folder holds (null for a project with no commit yet: an empty folder). */
  readonly commitId: string | null;
  /** What the folder held before the run compared with what it holds now. */
  changes(): Promise<FolderChanges>;
  /** Gives the folder back: reused for the next run at the same commit when unchanged, removed otherwise. */
  release(): Promise<void>;
}

export type ChangeAction = 'created' | 'modified' | 'deleted';

export interface FileChange {
  /** Path relative to the workspace folder, '/'-separated. */
  path: string;
  action: ChangeAction;
}

/** An entry the write-back will not take: a symlink, a device, a fifo, a socket, a reserved name. */
export interface SkippedEntry {
  path: string;
  reason: string;
}

export interface FolderChanges {
  /** Regular files created, modified (content differs) or deleted, sorted by path. */
  files: FileChange[];
  /** Folders created (empty ones included) and deleted. */
  folders: FileChange[];
  skipped: SkippedEntry[];
}
