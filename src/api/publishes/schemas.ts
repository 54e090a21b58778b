import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import { SLUG_PATTERN } from '../../publish/publishKey.ts';

const id = z.string().min(1).max(100);
const isoTime = z.iso.datetime({ offset: true }).describe('an ISO 8601 date and time in the future');
const slug = z
  .string()
  .regex(SLUG_PATTERN, 'lowercase letters, digits and hyphens (1 to 64, not starting or ending with a hyphen)')
  .describe('a readable public address, unique on this server: /p/{slug} serves the same content as /p/{publish_key}');
const version = z.number().int().min(1).describe('the node version to serve (json, markdown and file nodes)');

export const publishParams = z.object({ publish_id: id });

export const listQuery = z.object({ project_id: id }).strict();

export const createBody = z
  .object({
    project_id: id,
    node_id: id,
    version: version.optional().describe('pin this version; absent: always serve the latest'),
    expires_at: isoTime.optional().describe('after this time the public address answers 404'),
    slug: slug.optional(),
  })
  .strict();

export const updateBody = z
  .object({
    enabled: z.boolean().optional().describe('false: the public address answers 404 until enabled again'),
    expires_at: isoTime.nullable().optional().describe('a new expiry; null: never expires'),
    version: version.nullable().optional().describe('pin this version; null: serve the latest'),
    slug: slug.nullable().optional().describe('a new slug; null removes it'),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'name at least one of enabled, expires_at, version, slug', path: ['body'] });

export const publishSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  node_id: z.string(),
  publish_key: z.string().describe('the unguessable public key (192 random bits)'),
  url: z.string().describe('the public address: GET it without a credential'),
  slug: z.string().nullable(),
  version: z.number().int().nullable().describe('the pinned version; null: always the latest'),
  enabled: z.boolean(),
  expires_at: z.string().nullable(),
  status: z.enum(['live', 'disabled', 'expired', 'node_trashed', 'node_deleted']).describe('whether the public address serves now, and why not'),
  node_type: z.enum(['folder', 'json', 'markdown', 'file']).nullable(),
  node_path: z.string().nullable().describe("the node's current path (where it was deleted from, in the trash); null when it is gone"),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const publishList = z.object({ publishes: z.array(publishSchema), items: itemsSchema(publishSchema, 'publishes'), total: z.number().int() });

export const publishDeleted = z.object({ id: z.string(), deleted: z.literal(true) });

export const publicParams = z.object({ key: z.string().min(1).max(200) });

export const publicQuery = z.object({
  format: z.enum(['html', 'md', 'json']).optional().describe('markdown: html (default) or md (the text); json: json; folder: html (default, an index page) or json (the tree); files take none'),
  pointer: z.string().max(4096).optional().describe('json nodes: the member at this JSON Pointer (RFC 6901)'),
});
