/** Publishing (migration 018): src/publish/. */
export interface PublishingTables {
  publishes: PublishesTable;
}

/** A node made public under an unguessable key (and an optional slug); `version` null serves the latest. */
export interface PublishesTable {
  id: string;
  project_id: string;
  node_id: string;
  publish_key: string;
  slug: string | null;
  version: number | null;
  /** 1 or 0. */
  enabled: number;
  expires_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
