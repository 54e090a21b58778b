import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';

const id = z.string().min(1).max(100);
const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().max(2000);
/** A JSON Schema (draft-07 unless its $schema names 2019-09 or 2020-12); compiled with ajv when it is set. */
const jsonSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => JSON.stringify(s).length <= 256 * 1024, 'a JSON Schema of at most 256 KiB')
  .describe('a JSON Schema every change of the data is validated against (ajv)');
const pointer = z
  .string()
  .max(4096)
  .describe('a JSON Pointer (RFC 6901: ~0 is ~, ~1 is /); "" or "/" is the whole table');
const baseVersion = z.number().int().min(1).describe("the node's version the change was built on: 409 when the table has changed since");
/** A JSON value that must be there (z.unknown() alone lets a missing field through). */
const required = (what: string) => z.unknown().refine((v) => v !== undefined, `${what} is required`);

export const tableParams = z.object({ table_id: id });

export const listTablesQuery = z
  .object({ org_id: id.optional(), project_id: id.optional() })
  .refine((q) => q.org_id || q.project_id, { message: 'org_id or project_id is required', path: ['org_id'] });

export const createTableBody = z
  .object({
    name,
    project_id: id,
    path: z.string().min(1).max(1024).optional().describe('where the json node goes (default tables/<name as a slug>.json); nothing may be there yet'),
    description: description.optional(),
    data: z.unknown().optional().describe('the initial data: an object or an array (default [])'),
    json_schema: jsonSchema.optional(),
  })
  .strict();

export const updateTableBody = z
  .object({
    name: name.optional(),
    description: description.optional(),
    json_schema: jsonSchema.nullable().optional().describe('a new JSON Schema (the data must already match it: 422 with its errors otherwise); null removes it'),
  })
  .strict();

export const readDataQuery = z.object({ path: pointer.optional() }).strict();

export const appendDataBody = z
  .object({ path: pointer.default(''), data: required('data').describe('appended to the array at path as one element, or (an object) merged into the object there'), base_version: baseVersion.optional() })
  .strict();

export const putDataBody = z
  .object({ path: pointer, value: required('value').describe('any JSON value; the whole table (path "" or "/") must be an object or an array'), base_version: baseVersion.optional() })
  .strict();

export const deleteDataQuery = z
  .object({ path: pointer, base_version: z.coerce.number().int().min(1).optional().describe("the node's version the change was built on") })
  .strict();

export const tableSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  project_id: z.string(),
  org_id: z.string(),
  node_id: z.string(),
  path: z.string().describe("the node's current path (where it was deleted from, when it is in the trash)"),
  version: z.number().int().nullable().describe("the node's version: what base_version names (null when the node is gone)"),
  node_state: z.enum(['active', 'trashed', 'deleted']).describe('trashed: restore the node to use the table; deleted: the data is gone'),
  json_schema: z.record(z.string(), z.unknown()).nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const tableList = z.object({ tables: z.array(tableSchema), items: itemsSchema(tableSchema, 'tables'), total: z.number().int() });

export const dataSchema = z.object({
  table_id: z.string(),
  node_id: z.string(),
  version: z.number().int(),
  pointer: z.string(),
  value: z.unknown(),
});

export const changeSchema = z.object({
  table_id: z.string(),
  node_id: z.string(),
  version: z.number().int().describe("the node's version after the change"),
  project_version: z.number().int().nullable(),
  pointer: z.string().describe('the member that changed (an append or "-" resolved to its index)'),
  created: z.boolean().describe('PUT: the member did not exist before'),
  changed: z.boolean().describe('false when the data was already so: no new version'),
});

export const tableDeleted = z.object({
  id: z.string(),
  deleted: z.literal(true),
  trash_path: z.string().nullable().describe("where the table's node went in the trash (null when it was not live)"),
});
