/** Usage analytics (migration 018): src/analytics/. */
export interface AnalyticsTables {
  access_counts: AccessCountsTable;
  access_visitors: AccessVisitorsTable;
  analytics_salts: AnalyticsSaltsTable;
}

/** Per-minute usage aggregates (migration 018); '' stands for "none" in the key columns. */
export interface AccessCountsTable {
  project_id: string;
  minute: number;
  publish_id: string;
  connection_id: string;
  node_id: string;
  views: number;
  api_calls: number;
}

/** Distinct public visitors per minute, publish and node: salted hashes only (migration 018). */
export interface AccessVisitorsTable {
  project_id: string;
  minute: number;
  publish_id: string;
  node_id: string;
  visitor: string;
}

/** The visitor hash's salt of each UTC day (only today's is kept). */
export interface AnalyticsSaltsTable {
  day: string;
  salt: string;
}
