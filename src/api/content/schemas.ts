import { z } from 'zod';
import { nodeRollbackSchema as nodeRollback } from '../../presenters/changes.ts';
import { auditLogSchema, contentFieldsSchema, trashItemSchema } from '../../presenters/content.ts';
import { itemsSchema } from '../../presenters/items.ts';
import { projectCommitsSchema, projectDiffSchema, versionDiffSchema, versionListSchema, versionWithContentSchema } from '../../presenters/history.ts';
import { entrySchema, treeSchema } from '../../presenters/node.ts';

const path = z.string().max(4096);
const requiredPath = path.min(1, 'path is required');
const intFromQuery = (min: number) => z.coerce.number().int().min(min);
const nodeType = z.enum(['json', 'markdown', 'file']);
const message = z.string().max(10_000).optional();

export const projectParams = z.object({ projectId: z.string().min(1).max(100) });

export const pathQuery = z.object({ path: path.default('') });
export const requiredPathQuery = z.object({ path: requiredPath });
const rangeText = (what: string) => z.string().max(40).optional().describe(what);
/** A ranged read: `lines` (1-based, inclusive) or `bytes` (0-based, inclusive), "START-END" or "START-". */
export const catQuery = requiredPathQuery.extend({
  lines: rangeText('lines START-END (1-based, inclusive; "START-" to the end): answer just those lines of a text, Markdown or JSON node'),
  bytes: rangeText('bytes START-END (0-based, inclusive; "START-" to the end): answer just those bytes (text by whole characters, binary files as base64)'),
});
/** An archive of a folder ('' = the project) at the current or a given project version. */
export const archiveQuery = z.object({
  path: path.default(''),
  format: z.enum(['zip', 'tar.gz']).default('zip'),
  version: intFromQuery(1).optional().describe('project version (default: the current one)'),
});

/** Trees come in pages of at most `limit` nodes; `cursor` is the previous page's `next_cursor`. */
export const treeQuery = z.object({
  path: path.default(''),
  max_depth: intFromQuery(-1).default(-1),
  limit: intFromQuery(1).max(5_000).default(2_000),
  cursor: z.string().min(1).max(8192).optional(),
});

/** Every file's path, in pages larger than the tree's (a path and a type are a few dozen bytes). */
export const pathsQuery = z.object({
  path: path.default(''),
  limit: intFromQuery(1).max(50_000).default(10_000),
  cursor: z.string().min(1).max(8192).optional(),
});

/** Without `path`: the project's commits (`before` pages back); with it: that node's versions. */
export const versionsQuery = z
  .object({
    path: requiredPath.optional(),
    limit: intFromQuery(1).max(1000).default(50),
    since_version: intFromQuery(0).optional(),
    version: intFromQuery(1).optional(),
    before: intFromQuery(1).optional(),
    offset: intFromQuery(0).optional(),
  })
  .superRefine((q, ctx) => {
    // Refused rather than ignored: a client paging with offset would see page one again and again.
    if (q.offset) ctx.addIssue({ code: 'custom', path: ['offset'], message: 'offset is not supported: page with before (project history) or since_version (a node)' });
    const nodeOnly = (['since_version', 'version'] as const).filter((k) => q[k] !== undefined);
    if (q.path === undefined) for (const k of nodeOnly) ctx.addIssue({ code: 'custom', path: [k], message: `${k} needs path` });
    if (q.path !== undefined && q.before !== undefined) ctx.addIssue({ code: 'custom', path: ['before'], message: 'before pages project history: leave out path' });
  });
export const versionContentQuery = z.object({ path: requiredPath, version: intFromQuery(1) });
/** With `path`: two versions of that node; without: the paths changed between two project versions. */
export const diffQuery = z.object({ path: requiredPath.optional(), v1: intFromQuery(0), v2: intFromQuery(1) });

/** Content is validated against node_type by the content store (object/array for json, string for markdown, base64 for files). */
/** The node type a path's extension names (.json, .md, .markdown), for writes that leave node_type out. */
const typeOfPath = (p: string) => (/\.json$/i.test(p) ? 'json' : /\.(md|markdown)$/i.test(p) ? 'markdown' : undefined);

/**
 * `type` is another name for `node_type` (PuppyOne's earlier clients send it); without either,
 * a path ending in .json or .md/.markdown says the type, any other path needs one (422).
 */
export const writeBody = z
  .object({
    path: requiredPath,
    content: z.unknown().refine((v) => v !== undefined, 'content is required'),
    node_type: nodeType.optional(),
    type: nodeType.optional().describe('another name for node_type'),
    message,
    base_version: z.number().int().min(0).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.node_type !== undefined && b.type !== undefined && b.node_type !== b.type) ctx.addIssue({ code: 'custom', path: ['type'], message: 'give node_type or type, not two different ones' });
    if (b.node_type === undefined && b.type === undefined && typeOfPath(b.path) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['node_type'], message: 'node_type is required (json, markdown or file) unless the path ends in .json, .md or .markdown' });
    }
  })
  .transform(({ type, ...b }) => ({ ...b, node_type: (b.node_type ?? type ?? typeOfPath(b.path))! }));
export const mkdirBody = z.object({ path: requiredPath, message });
export const mvBody = z.object({ old_path: requiredPath, new_path: requiredPath, message });
/** PuppyOne's earlier name of mv: `POST move {src, dst}`. */
export const moveBody = z.object({ src: requiredPath, dst: requiredPath, message });
export const rmBody = z.object({ path: requiredPath, permanent: z.boolean().default(false), message });
/** Without original_path the item goes back where it was deleted from (or, if that is unknown, to the root under its name). */
export const restoreBody = z.object({ trash_path: requiredPath, original_path: requiredPath.optional(), message });
export const bulkWriteFile = z.object({
  path: requiredPath,
  content: z.unknown().refine((v) => v !== undefined, 'content is required'),
  node_type: nodeType,
});
/** The files are checked one by one (parseListInput) so that 100,000 of them do not hold the event loop. */
export const bulkWriteBody = z.object({
  files: z.array(z.unknown()).min(1, 'files must not be empty').max(100_000),
  message,
});
/**
 * {path, version}: one node to one of its versions. {path, target_version}: that path (with
 * everything beneath a folder) to its state at a project version. {target_version}: the whole
 * project. `version` and `target_version` together are ambiguous: 422.
 */
export const rollbackBody = z
  .object({
    path: requiredPath.optional(),
    version: z.number().int().min(1).optional(),
    target_version: z.number().int().min(1).optional(),
    message,
  })
  .superRefine((b, ctx) => {
    if (b.version !== undefined && b.target_version !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['target_version'], message: 'give version (a node version) or target_version (a project version), not both' });
    }
    if (b.target_version !== undefined) return;
    if (b.path === undefined) ctx.addIssue({ code: 'custom', path: ['path'], message: 'path (with version) or target_version is required' });
    if (b.version === undefined) ctx.addIssue({ code: 'custom', path: ['version'], message: 'version or target_version is required with path' });
  });
/** project_id may be left out when the segment is a node id (the id surface of spec 4.2 sends none). */
export const auditQuery = z.object({ project_id: z.string().min(1).optional(), limit: intFromQuery(1).max(1000).default(100) });

// Answers of the path surface (routes.ts) and the audit trail (auditRoutes.ts); history and changes shared with MCP are in src/presenters/.

const int = z.number().int();
const versionRef = { project_version: int.nullable(), commit_id: z.string().nullable() };

export const statAnswer = entrySchema.extend({ exists: z.literal(true).describe('for PuppyOne clients; a missing path is 404') });
export const versionWithContentAnswer = versionWithContentSchema;
export const lsAnswer = z.object({ path: z.string(), entries: z.array(entrySchema) });

const catHead = { id: z.string(), path: z.string(), name: z.string(), version: int, content_hash: z.string().nullable() };
export const catAnswer = z.discriminatedUnion('type', [
  z.object({ ...catHead, type: z.literal('folder'), children_count: int }),
  z.object({ ...catHead, type: z.literal('file'), size: int, mime_type: z.string().nullable(), download_url: z.string().describe('GET it for the bytes (/raw)') }),
  z.object({ ...catHead, type: z.literal('json'), ...contentFieldsSchema }),
  z.object({ ...catHead, type: z.literal('markdown'), ...contentFieldsSchema }),
]);

/** A ranged read's answer: the slice with the content's totals (commands/readSlice.ts). */
export const sliceSchema = {
  range: z.object({ unit: z.enum(['lines', 'bytes']), start: int, end: int }).describe('what was answered (end < start: nothing, past the end)'),
  bytes: z.object({ start: int, end: int }).describe('the byte offsets answered (0-based, inclusive)'),
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
  total_bytes: int,
  total_lines: int.nullable().describe('null for binary files'),
  eof: z.boolean().describe('the slice reaches the end of the content'),
};
export const catSliceAnswer = z.object({ ...catHead, type: z.enum(['json', 'markdown', 'file']), ...sliceSchema });

export const treeAnswer = entrySchema.extend({
  children: z.array(treeSchema).nullable().optional().describe('absent when max_depth was reached; null for non-folders'),
  node_count: int,
  next_cursor: z.string().nullable().describe('pass as cursor for the next page'),
  entries: z.array(entrySchema).optional().describe("with CNS_PUPPYONE_COMPAT: this page's nodes below the root as one flat list, depth first (PuppyOne's shape)"),
});

export const pathsAnswer = z.object({
  files: z.array(z.object({ path: z.string(), type: nodeType })).describe('the files (json, markdown, file) of this page, depth first; folders are not listed'),
  node_count: int.describe('nodes this page walked, folders included (what `limit` counts)'),
  next_cursor: z.string().nullable().describe('pass as cursor for the next page'),
});

export const trashAnswer = z.object({
  items: z.array(trashItemSchema),
  total: int,
  entries: z.array(trashItemSchema.extend({ path: z.string().describe('trash_path') })).optional().describe("with CNS_PUPPYONE_COMPAT: the items again, as PuppyOne's clients list them"),
});

export const writeAnswer = entrySchema.extend({ changed: z.boolean(), ...versionRef, project_version: int.nullable() });
export const mkdirAnswer = entrySchema.extend({ changed: z.boolean() });
export const mvAnswer = entrySchema.extend({ old_path: z.string(), new_path: z.string().describe('path, by the name PuppyOne clients read'), changed: z.boolean() });
export const rmAnswer = z.object({
  id: z.string(),
  path: z.string(),
  permanent: z.boolean(),
  trash_path: z.string().nullable(),
  project_version: int.nullable(),
  old_path: z.string().describe('path, by the name PuppyOne clients read'),
  new_path: z.string().nullable().describe('trash_path, by the name PuppyOne clients read'),
  version: int.nullable().describe('project_version, by the name PuppyOne clients read'),
});
export const restoreAnswer = entrySchema.extend({ restored_from: z.string(), old_path: z.string().describe('restored_from, by the name PuppyOne clients read'), new_path: z.string().describe('path, by the name PuppyOne clients read') });
export const bulkWriteAnswer = z.object({
  changed: z.boolean(),
  count: int,
  changed_count: int,
  ...versionRef,
  nodes: z.array(entrySchema).describe('the first 1000 nodes written'),
  nodes_truncated: z.boolean(),
  total: int.describe('count, by the name PuppyOne clients read'),
  version: int.nullable().describe('project_version, by the name PuppyOne clients read'),
});

export const versionsAnswer = z.union([projectCommitsSchema, versionListSchema, versionWithContentSchema]).describe('without path: project commits; with path: the node\'s versions; with path and version: that version with its content');
export const diffAnswer = z.union([projectDiffSchema, versionDiffSchema]).describe('without path: the changed paths; with path: the node\'s diff');

const treeRollback = z.object({
  target_version: int,
  changed: z.boolean(),
  ...versionRef,
  nodes: z.array(entrySchema),
  new_version: int.nullable().describe('project_version, by the name PuppyOne clients read'),
  rolled_back_to: int.describe('target_version, by the name PuppyOne clients read'),
});
export const rollbackAnswer = z
  .union([nodeRollback, nodeRollback.extend({ target_version: int }), treeRollback.extend({ path: z.string() }), treeRollback])
  .describe('{path, version}: the node; {path, target_version}: the node (or folder with its nodes); {target_version}: the project with its nodes');

export const nodeAuditAnswer = z.object({ path: z.string(), node_id: z.string().nullable(), logs: z.array(auditLogSchema), items: itemsSchema(auditLogSchema, 'logs'), total: int });
export const projectAuditAnswer = z.object({ project_id: z.string(), logs: z.array(auditLogSchema), items: itemsSchema(auditLogSchema, 'logs'), total: int, next_before: int.nullable() });
