import type { DataChange, TableView } from '../../data/tables/tables.ts';
import { withItems } from '../../presenters/items.ts';

export function presentTable({ table, orgId, node }: TableView) {
  return {
    id: table.id,
    name: table.name,
    description: table.description,
    project_id: table.project_id,
    org_id: orgId,
    node_id: table.node_id,
    path: node ? (node.state === 'active' ? node.path : (node.originalPath ?? table.path)) : table.path,
    version: node?.version ?? null,
    node_state: node ? node.state : ('deleted' as const),
    json_schema: table.json_schema,
    created_by: table.created_by,
    created_at: table.created_at,
    updated_at: table.updated_at,
  };
}

export const presentTableList = (views: TableView[]) => ({ ...withItems('tables', views.map(presentTable)), total: views.length });

export function presentChange(c: DataChange) {
  return {
    table_id: c.view.table.id,
    node_id: c.view.table.node_id,
    version: c.view.node!.version,
    project_version: c.projectVersion,
    pointer: c.pointer,
    created: c.created,
    changed: c.changed,
  };
}
