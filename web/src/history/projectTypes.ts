/** The answers of the project history and folder snapshot routes (README: project history, snapshots). */

/** A commit of the project (GET /content/{project_id}/versions without a path). */
export interface ProjectCommit {
  version: number;
  commit_id: string;
  actor_type: string;
  actor_id: string;
  author: string;
  /** The author a pushed git commit names, when it is not the actor who pushed it. */
  authored_by: string | null;
  message: string | null;
  created_at: string;
  changes: { path: string; old_path: string | null; action: string; node_id: string; version: number }[];
}

export interface ProjectCommitPage {
  current_version: number;
  commits: ProjectCommit[];
  next_before: number | null;
}

/** A folder snapshot: a commit that changed something beneath the folder (GET /nodes/{id}/snapshots). */
export interface Snapshot {
  snapshot_id: string;
  project_version: number;
  created_at: string;
  actor_type: string;
  actor_id: string;
  author: string;
  message: string;
  files_count: number;
  changed_count: number;
}

export interface SnapshotPage {
  folder_id: string;
  path: string;
  snapshots: Snapshot[];
  total: number;
}
