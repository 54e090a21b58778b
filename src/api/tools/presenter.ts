import { toolSchemas } from '../../tools/registry.ts';
import { withItems } from '../../presenters/items.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';

export const presentTool = (t: ToolRecord) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  type: t.type,
  node_id: t.node_id,
  project_id: t.project_id,
  config: t.config,
  input_schema: toolSchemas(t.type).input,
  created_by: t.created_by,
  created_at: t.created_at,
  updated_at: t.updated_at,
});

export const presentToolList = (tools: ToolRecord[]) => ({ ...withItems('tools', tools.map(presentTool)), total: tools.length });
