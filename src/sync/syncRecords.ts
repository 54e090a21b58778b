import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';

/** Stored shapes of syncs (spec 4.7): the state beside a `sync` connection, and one record per cycle. */
export type SyncStatus = 'active' | 'paused';
/** `queued`: a platform run waiting for a free slot under the global concurrency cap. */
export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';

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
  /** Interval mode: seconds between runs (jittered). */
  interval_s: number | null;
  /** Interval mode: when the scheduler runs the sync next (ISO 8601); kept across restarts. */
  next_run_at: string | null;
  /** The platform's own change cursor after the last committed page. */
  source_cursor: string | null;
  /** Project commit number up to which local changes were considered for push. */
  local_cursor: number | null;
  /** Why a paused sync is paused: `user`, `needs_reauth`, `disconnected`. */
  pause_reason: string | null;
  /** Webhook mode: the secret, sealed (never shown again after it was set). */
  webhook_secret: string | null;
  /** Platform syncs: a page committed whose items and cursor are not stored yet (JSON; runSync.ts replays it). */
  pending_page: string | null;
}

export interface SyncRunRecord {
  id: string;
  sync_id: string;
  project_id: string;
  /** `client` (a cycle of the command-line sync), `manual` (refresh), `interval` or `webhook`. */
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
  /** Platform runs: nodes the pull created, updated and sent to the trash. */
  pulled_created: number;
  pulled_updated: number;
  pulled_deleted: number;
  /** Platform runs: the source cursor the run started from and the last one it stored. */
  cursor_before: string | null;
  cursor_after: string | null;
  http_calls: number;
  rate_limited_ms: number;
  /** The cluster node that queued or started the run (its recovery's to interrupt); null on a single box and for client runs. */
  cluster_node: string | null;
}

/** A sync of any kind: its state and its `sync` connection (whose key it acts with). */
export interface Sync {
  state: SyncStateRecord;
  connection: ConnectionRecord;
}
