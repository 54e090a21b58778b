import { z } from 'zod';
import { optionalProjectQuery } from '../shared/nodeHistorySchemas.ts';

// The requests shared with /collab (history, snapshots, the optional project_id) live beside their handlers.
export { nodeParams, optionalProjectQuery } from '../shared/nodeHistorySchemas.ts';

const id = z.string().min(1).max(200);
const projectId = z.string().min(1).max(100);
/** One path segment: the name of a node inside its parent. */
const name = z
  .string()
  .min(1, 'name is required')
  .max(255)
  .refine((n) => !n.includes('/') && n !== '.' && n !== '..', 'name may not contain "/" or be "." or ".."');
const parentId = id.nullable().optional();
const boolFromQuery = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const message = z.string().max(10_000).optional();

export const nodeQuery = optionalProjectQuery.extend({ include_content: boolFromQuery.optional() });
export const childrenQuery = z.object({ project_id: projectId, parent_id: id.optional(), include_content: boolFromQuery.optional() });
/** A leading `/` is allowed (PuppyOne's clients send `/docs/a.md`): paths are relative to the project root either way. */
export const byPathQuery = z.object({
  project_id: projectId,
  path: z.string().max(4096).transform((p) => p.replace(/^\/+/, '')),
  include_content: boolFromQuery.optional(),
});
export const byIdPathQuery = z.object({ project_id: projectId, id_path: z.string().min(1).max(20_000), include_content: boolFromQuery.optional() });
export const batchQuery = z.object({
  ids: z
    .string()
    .min(1, 'ids is required')
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .refine((a) => a.length > 0 && a.length <= 1000, 'between 1 and 1000 ids'),
  project_id: projectId.optional(),
  include_content: boolFromQuery.optional(),
});
export const downloadQuery = optionalProjectQuery.extend({ version: z.coerce.number().int().min(1).optional() });

const content = z.unknown().refine((v) => v !== undefined, 'content is required');
const base = { project_id: projectId, parent_id: parentId, name, message };
export const folderBody = z.object(base);
export const jsonBody = z.object({ ...base, content: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())], 'content must be a JSON object or array') });
export const markdownBody = z.object({ ...base, content: z.string('content must be a string') });
export const bulkCreateBody = z.object({
  project_id: projectId,
  parent_id: parentId,
  message,
  nodes: z
    // Strict: a field we do not understand (a misspelt parent reference) must fail, not put the node in the wrong folder.
    .array(
      z
        .object({
          name,
          type: z.enum(['folder', 'json', 'markdown', 'file']),
          // null is no node's content (PuppyOne's clients send it for folders): the same as leaving it out.
          content: z.unknown().optional().transform((v) => (v === null ? undefined : v)),
          temp_id: z.string().min(1).max(200).optional(),
          parent_temp_id: z.string().min(1).max(200).optional(),
          parent_id: parentId,
        })
        .strict(),
    )
    .min(1, 'nodes must not be empty')
    .max(10_000),
}).strict();
/** `preview_json` (json) and `preview_md` (markdown) are PuppyOne's names for `content`: one of the three at most. */
export const updateBody = z
  .object({
    name: name.optional(),
    content: content.optional(),
    preview_json: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())], 'preview_json must be a JSON object or array').optional(),
    preview_md: z.string('preview_md must be a string').optional(),
    base_version: z.number().int().min(1).optional(),
    message,
  })
  .superRefine((b, ctx) => {
    const given = (['content', 'preview_json', 'preview_md'] as const).filter((k) => b[k] !== undefined);
    if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `give one of ${given.join(', ')}, not both` });
    if (b.name === undefined && given.length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'name or content is required' });
  })
  .transform(({ preview_json, preview_md, ...b }) => ({ ...b, content: b.content ?? preview_json ?? preview_md }));
/** `parent_id` is another name for `new_parent_id` (clients of the id-addressed API send it); not both. */
export const moveBody = z
  .object({ new_parent_id: id.nullable().optional(), parent_id: id.nullable().optional(), message })
  .superRefine((b, ctx) => {
    if (b.new_parent_id !== undefined && b.parent_id !== undefined) ctx.addIssue({ code: 'custom', path: ['parent_id'], message: 'give new_parent_id or parent_id, not both' });
  })
  .transform(({ parent_id, ...b }) => ({ ...b, new_parent_id: b.new_parent_id === undefined ? parent_id : b.new_parent_id }));
/** The upload's fields as query parameters (PuppyOne's web client sends them so; `content_type` is its name for `mime_type`). */
export const uploadQuery = z.object({
  project_id: projectId.optional(),
  node_id: id.optional(),
  parent_id: id.optional(),
  name: z.string().max(255).optional(),
  size: z.coerce.number().int().min(0).optional(),
  content_type: z.string().max(255).optional(),
});

/**
 * An upload address for a new file node (`name`, optional `parent_id`) or for a new version of
 * an existing file node (`node_id`; it keeps its name and folder).
 */
export const uploadBody = z
  .object({
    project_id: projectId,
    node_id: id.optional(),
    parent_id: parentId,
    name: name.optional(),
    /** Optional: without it the PUT may send any size up to the limit (checked while streaming). */
    size: z.number().int().min(0).optional(),
    mime_type: z.string().min(1).max(255).regex(/^[\w.+-]+\/[\w.+-]+$/, 'mime_type must look like type/subtype').optional(),
  })
  .superRefine((b, ctx) => {
    if (b.node_id === undefined && b.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'name is required (or node_id for a new version)' });
    if (b.node_id !== undefined && b.name !== undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'not allowed with node_id: a new version keeps its name' });
    if (b.node_id !== undefined && b.parent_id != null) ctx.addIssue({ code: 'custom', path: ['parent_id'], message: 'not allowed with node_id: a new version keeps its folder' });
  });
