/** Tools (migration 010): src/tools/. */
export interface ToolsTables {
  tools: ToolsTable;
}

/** A named operation bound to a node of a project (`node_id` null: the whole project). */
export interface ToolsTable {
  id: string;
  project_id: string;
  node_id: string | null;
  name: string;
  description: string;
  type: string;
  /** The type's config, as JSON. */
  config: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
