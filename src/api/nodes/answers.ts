import { z } from 'zod';
import { nodeSchema } from '../../presenters/node.ts';
import { itemsSchema } from '../../presenters/items.ts';

// What the id surface answers (routes.ts, transferRoutes.ts), for the OpenAPI document.

const int = z.number().int();

export const nodeList = z.object({ project_id: z.string(), parent_id: z.string().nullable(), nodes: z.array(nodeSchema), items: itemsSchema(nodeSchema, 'nodes'), total: int });
export const batchAnswer = z.object({
  nodes: z.array(nodeSchema),
  missing: z.array(z.object({ id: z.string(), code: z.enum(['NOT_FOUND', 'FORBIDDEN']) })),
  total: int,
});
export const bulkCreateAnswer = z.object({
  nodes: z.array(nodeSchema),
  created: z.array(z.object({ temp_id: z.string(), node_id: z.string() })).describe('each temp_id of the request with the id of the node it became'),
  total: int,
  project_version: int.nullable(),
  commit_id: z.string().nullable(),
});
export const updateAnswer = nodeSchema.extend({ changed: z.boolean(), project_version: int.nullable() });
export const moveAnswer = nodeSchema.extend({ old_parent_id: z.string().nullable(), old_path: z.string(), changed: z.boolean() });
export const deleteAnswer = nodeSchema.extend({ trash_path: z.string(), original_path: z.string(), project_version: int.nullable() });

export const uploadAddress = z.object({
  upload_url: z.string().describe('PUT the bytes here (no credential needed; it writes once)'),
  method: z.literal('PUT'),
  node_id: z.string(),
  path: z.string(),
  size: int.nullable().describe('the declared size; null when none was declared (the limit applies while streaming)'),
  base_version: int,
  expires_in: int,
  max_size: int,
});
export const uploaded = nodeSchema.extend({ project_version: int.nullable() });
export const downloadAddress = z.object({
  download_url: z.string().describe('GET the bytes here (no credential needed; Range supported)'),
  node_id: z.string(),
  version: int,
  size: int,
  content_hash: z.string(),
  expires_in: int,
});
