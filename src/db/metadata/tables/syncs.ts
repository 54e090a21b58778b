import type { Generated } from 'kysely';

/** Syncs (migrations 006, 019, 021, 028, 032): src/sync/ and src/platform/runtime/. */
export interface SyncsTables {
  sync_states: SyncStatesTable;
  sync_runs: SyncRunsTable;
  sync_items: SyncItemsTable;
  sync_webhook_deliveries: SyncWebhookDeliveriesTable;
}

/** A sync's state beside its `sync` connection (src/sync/syncRecords.ts says what each column means). */
export interface SyncStatesTable {
  sync_id: string;
  project_id: string;
  provider: string;
  trigger_mode: string;
  status: 'active' | 'paused';
  acked_cursor: Generated<number>;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
  interval_s: number | null;
  next_run_at: string | null;
  source_cursor: string | null;
  local_cursor: number | null;
  pause_reason: string | null;
  webhook_secret: string | null;
  /** A page committed to content whose items and cursor are not stored yet (JSON; runSync.ts). */
  pending_page: string | null;
}

export interface SyncRunsTable {
  id: string;
  sync_id: string;
  project_id: string;
  trigger: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';
  started_at: string;
  finished_at: string | null;
  cursor_from: number | null;
  cursor_to: number | null;
  files_up: Generated<number>;
  files_down: Generated<number>;
  /** JSON arrays. */
  conflicts: Generated<string>;
  errors: Generated<string>;
  pulled_created: Generated<number>;
  pulled_updated: Generated<number>;
  pulled_deleted: Generated<number>;
  cursor_before: string | null;
  cursor_after: string | null;
  http_calls: Generated<number>;
  rate_limited_ms: Generated<number>;
  /** The cluster node that queued or started it (migration 032): its start-up recovery touches only its own; null on a single box. */
  cluster_node: string | null;
}

/** Source item → node of a platform sync. */
export interface SyncItemsTable {
  sync_id: string;
  source_id: string;
  node_id: string | null;
  node_path: string;
  path: string;
  source_version: string;
  content_hash: string | null;
  /** JSON object. */
  meta: Generated<string>;
}

/** Webhook deliveries a sync accepted; `seq` orders them (newest kept). */
export interface SyncWebhookDeliveriesTable {
  seq: Generated<number>;
  sync_id: string;
  delivery_id: string | null;
  digest: string;
  /** Milliseconds since the epoch. */
  received_at: number;
  run_id: string | null;
}
