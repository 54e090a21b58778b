import { z } from 'zod';

const path = z.string().max(4096);
const requiredPath = path.min(1, 'path is required');
const intFromQuery = (min: number) => z.coerce.number().int().min(min);
const nodeType = z.enum(['json', 'markdown', 'file']);
const message = z.string().max(10_000).optional();

export const projectParams = z.object({ projectId: z.string().min(1).max(100) });

export const pathQuery = z.object({ path: path.default('') });
export const requiredPathQuery = z.object({ path: requiredPath });
export const treeQuery = z.object({ path: path.default(''), max_depth: intFromQuery(-1).default(-1) });

export const versionsQuery = z.object({
  path: requiredPath,
  limit: intFromQuery(1).max(1000).default(50),
  offset: intFromQuery(0).default(0),
  since_version: intFromQuery(0).optional(),
  version: intFromQuery(1).optional(),
});
export const versionContentQuery = z.object({ path: requiredPath, version: intFromQuery(1) });
export const diffQuery = z.object({ path: requiredPath, v1: intFromQuery(1), v2: intFromQuery(1) });

/** Content is validated against node_type by the content store (object/array for json, string for markdown, base64 for files). */
export const writeBody = z.object({
  path: requiredPath,
  content: z.unknown().refine((v) => v !== undefined, 'content is required'),
  node_type: nodeType,
  message,
  base_version: z.number().int().min(0).optional(),
});
export const mkdirBody = z.object({ path: requiredPath, message });
export const mvBody = z.object({ old_path: requiredPath, new_path: requiredPath, message });
export const rmBody = z.object({ path: requiredPath, permanent: z.boolean().default(false), message });
export const restoreBody = z.object({ trash_path: requiredPath, original_path: requiredPath, message });
export const bulkWriteBody = z.object({
  files: z
    .array(
      z.object({
        path: requiredPath,
        content: z.unknown().refine((v) => v !== undefined, 'content is required'),
        node_type: nodeType,
      }),
    )
    .min(1, 'files must not be empty')
    .max(100_000),
  message,
});
/** Either {path, version} (one node) or {target_version} (the whole project, by its commit number). */
export const rollbackBody = z
  .object({
    path: requiredPath.optional(),
    version: z.number().int().min(1).optional(),
    target_version: z.number().int().min(1).optional(),
    message,
  })
  .superRefine((b, ctx) => {
    if (b.target_version !== undefined) return;
    if (b.path === undefined) ctx.addIssue({ code: 'custom', path: ['path'], message: 'path (with version) or target_version is required' });
    if (b.version === undefined) ctx.addIssue({ code: 'custom', path: ['version'], message: 'version is required with path' });
  });
/** project_id may be left out when the segment is a node id (the id surface of spec 4.2 sends none). */
export const auditQuery = z.object({ project_id: z.string().min(1).optional(), limit: intFromQuery(1).max(1000).default(100) });
