import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import { SAVE_FORMATS } from '../../data/dbConnectors/rowFormats.ts';
import { ENGINES, SSL_MODES } from '../../data/dbConnectors/types.ts';
import { paginationQuery } from '../../http/pagination.ts';

const id = z.string().min(1).max(100);
const name = z.string().trim().min(1, 'must not be empty').max(200);
/** A host name or an IP address (IPv6 may be bracketed); never a path, so no Unix socket. */
const host = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][A-Za-z0-9._:-]*)$/, 'a host name or an IP address')
  .describe('host name or IP address; loopback only when the operator sets CNS_DB_ALLOW_LOOPBACK, link-local and cloud metadata addresses never');

export const connectionParams = z.object({ id });
export const tableParams = z.object({ id, table: z.string().min(1).max(512).describe('a qualified name as GET …/tables lists it (`schema.table` for PostgreSQL)') });
export const listQuery = paginationQuery.extend({ project_id: id });
export const previewQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100).describe('rows to show (default 100, at most 1000)') });

export const createBody = z
  .object({
    project_id: id,
    name,
    engine: z.enum(ENGINES),
    host: host.optional(),
    port: z.number().int().min(1).max(65535).optional().describe('default 5432 (postgres) or 3306 (mysql)'),
    database: z.string().min(1).max(128).optional(),
    user: z.string().min(1).max(128).optional(),
    password: z.string().max(1024).optional().describe('stored encrypted; never returned'),
    ssl: z
      .union([z.boolean(), z.enum(SSL_MODES)])
      .optional()
      .describe('false/`disable` (default), `require` (TLS, certificate not checked), true/`verify-full` (TLS, certificate and host name checked)'),
    file: z.string().min(1).max(1024).optional().describe('sqlite: a path relative to the SQLite folder the operator configured (CNS_DB_SQLITE_DIR)'),
  })
  .strict();

export const saveBody = z
  .object({
    table: z.string().min(1).max(512).optional().describe('a table or view as GET …/tables lists it; its first `limit` rows are saved'),
    query: z.string().min(1).max(100_000).optional().describe('one read-only SELECT (or WITH … SELECT) statement'),
    path: z.string().min(1).max(1024).describe('where the node is written in the project (replaced as a new version when it exists)'),
    format: z.enum(SAVE_FORMATS).default('json').describe('json: a json node, an array of row objects; csv: a file node; markdown: a markdown node with a table'),
    limit: z.number().int().min(1).optional().describe('rows to read at most (default and maximum: CNS_DB_MAX_ROWS, 100000 unless set)'),
  })
  .strict()
  .refine((b) => (b.table === undefined) !== (b.query === undefined), { message: 'give exactly one of table and query', path: ['table'] });

const columnSchema = z.object({ name: z.string(), type: z.string().nullable(), nullable: z.boolean().nullable() });

export const connectionSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  engine: z.enum(ENGINES),
  host: z.string().nullable(),
  port: z.number().int().nullable(),
  database: z.string().nullable(),
  user: z.string().nullable(),
  has_password: z.boolean().describe('whether a password is stored (it is never returned)'),
  ssl: z.enum(SSL_MODES),
  file: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const connectionList = z.object({ connections: z.array(connectionSchema), items: itemsSchema(connectionSchema, 'connections'), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

export const tableSchema = z.object({
  schema: z.string(),
  name: z.string(),
  qualified_name: z.string().describe('what preview and save take'),
  type: z.enum(['table', 'view', 'materialized_view', 'foreign_table']),
  row_estimate: z.number().nullable().describe("from the catalog's statistics (PostgreSQL reltuples, MySQL TABLE_ROWS, SQLite sqlite_stat1), never a scan; null when unknown"),
  row_count_exact: z.boolean().describe('true when counted (SQLite files of at most 16 MiB)'),
  columns: z.array(columnSchema),
});

export const tableList = z.object({
  connection_id: z.string(),
  engine: z.enum(ENGINES),
  tables: z.array(tableSchema),
  truncated: z.boolean().describe('more than 1000 tables: the first 1000 by name'),
});

export const previewSchema = z.object({
  table: z.string(),
  columns: z.array(columnSchema),
  rows: z.array(z.record(z.string(), z.unknown())).describe('objects by column name; big integers and exact decimals as strings, binary as base64'),
  row_count: z.number().int(),
  truncated: z.boolean().describe('the table has more rows than shown'),
});

export const saveResultSchema = z.object({
  node_id: z.string(),
  path: z.string(),
  version: z.number().int(),
  format: z.enum(SAVE_FORMATS),
  rows: z.number().int(),
  bytes: z.number().int(),
  truncated: z.boolean().describe('the result had more rows than `limit`; the rest were not read'),
});
