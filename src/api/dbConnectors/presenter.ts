import type { z } from 'zod';
import type { DbConnectionRecord } from '../../data/dbConnectors/dbConnectionStore.ts';
import type { SaveResult } from '../../data/dbConnectors/connectors.ts';
import type { Preview } from '../../data/dbConnectors/engine.ts';
import type { SaveFormat } from '../../data/dbConnectors/rowFormats.ts';
import type { TableInfo, TableList } from '../../data/dbConnectors/types.ts';
import type * as schema from './schemas.ts';

/** A connection as answered: every field but the password, which is never returned. */
export const presentConnection = (c: DbConnectionRecord): z.output<typeof schema.connectionSchema> => ({
  id: c.id,
  project_id: c.project_id,
  name: c.name,
  engine: c.engine,
  host: c.host,
  port: c.port,
  database: c.database,
  user: c.user,
  has_password: c.has_password,
  ssl: c.ssl,
  file: c.file,
  created_by: c.created_by,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

const presentTable = (t: TableInfo): z.output<typeof schema.tableSchema> => ({
  schema: t.schema,
  name: t.name,
  qualified_name: t.qualifiedName,
  type: t.kind,
  row_estimate: t.rowEstimate,
  row_count_exact: t.rowCountExact,
  columns: t.columns,
});

export const presentTables = (c: DbConnectionRecord, list: TableList): z.output<typeof schema.tableList> => ({
  connection_id: c.id,
  engine: c.engine,
  tables: list.tables.map(presentTable),
  truncated: list.truncated,
});

export const presentPreview = (p: Preview): z.output<typeof schema.previewSchema> => ({
  table: p.table.qualifiedName,
  columns: p.columns,
  rows: p.rows,
  row_count: p.rows.length,
  truncated: p.truncated,
});

export const presentSave = (r: SaveResult, format: SaveFormat): z.output<typeof schema.saveResultSchema> => ({
  node_id: r.node.id,
  path: r.node.path,
  version: r.node.version,
  format,
  rows: r.rows,
  bytes: r.bytes,
  truncated: r.truncated,
});
