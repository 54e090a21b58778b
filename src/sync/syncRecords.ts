/** Stored shapes of syncs (spec 4.7): the state beside a `sync` connection, and one record per cycle. */
export type SyncStatus = 'active' | 'paused';
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'interrupted';

export interface SyncStateRecord {
  sync_id: string;
  project_id: string;
  provider: string;
  trigger_mode: string;
  status: SyncStatus;
  /** Project commit number up to which the client confirmed it applied remote changes (ack-pull). */
  acked_cursor: number;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SyncRunRecord {
  id: string;
  sync_id: string;
  project_id: string;
  /** `client` (a cycle of the command-line sync), `manual` (refresh) or `schedule`. */
  trigger: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  cursor_from: number | null;
  cursor_to: number | null;
  files_up: number;
  files_down: number;
  /** JSON arrays of paths and of messages. */
  conflicts: string;
  errors: string;
}
