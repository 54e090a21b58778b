import type { Generated } from 'kysely';

/**
 * Ingestion (migrations 015, 029, 032: src/ingest/), tables (016: src/data/tables/) and upload
 * addresses (008, 029: src/domain/uploads/). JSON columns are text; 0/1 flags integers.
 */
export interface IngestTables {
  ingest_tasks: IngestTasksTable;
  ingest_rules: IngestRulesTable;
  json_tables: JsonTablesTable;
  node_uploads: NodeUploadsTable;
}

/** The durable queue: tasks are claimed in `seq` order within a project. */
export interface IngestTasksTable {
  seq: Generated<number>;
  id: string;
  project_id: string;
  source: string;
  kind: 'file' | 'url' | 'platform';
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  target_path: string;
  mode: string | null;
  keep_original: number;
  rule_id: string | null;
  /** JSON: what the task needs to run again from the beginning. */
  input: string;
  progress: string | null;
  result: string | null;
  error: string | null;
  created_by: string;
  /** JSON: the Actor its versions record. */
  actor: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** The cluster node that claimed it last (migration 032): its start-up recovery touches only its own; null on a single box. */
  cluster_node: string | null;
}

/** ETL rules, matched in (created_at, seq) order. */
export interface IngestRulesTable {
  seq: Generated<number>;
  id: string;
  project_id: string;
  name: string;
  description: string;
  /** JSON: extensions and media types. */
  match: string;
  target: 'markdown' | 'json';
  json_schema: string | null;
  instructions: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A table's record; its data is the json node `node_id`. */
export interface JsonTablesTable {
  id: string;
  project_id: string;
  node_id: string;
  name: string;
  description: string;
  json_schema: string | null;
  path: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** An issued upload address: the grant it names; `claimed_at` set by the PUT that uses it. */
export interface NodeUploadsTable {
  id: string;
  project_id: string;
  node_id: string;
  parent_id: string | null;
  name: string;
  path: string;
  base_version: number;
  size: number;
  mime_type: string | null;
  principal_kind: 'user' | 'key';
  principal_id: string;
  created_at: string;
  expires_at: string;
  claimed_at: string | null;
}
