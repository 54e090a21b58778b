import { z } from 'zod';
import { puppyOneOnly } from './compat.ts';
import type { NodeInfo, TreeNode } from '../content/contentStore.ts';

/**
 * Which surface a node is shown on. Both show the same metadata (spec 2.1 plus path, version,
 * content_hash, size, mime_type, id_path); the id surface adds its addressing fields
 * (parent_id, project_id, state) and, when the caller read it, the content.
 */
export type NodeSurface = 'path' | 'id';

/**
 * The one presenter of a node, for both surfaces. `idPath` is the ids from the root joined by
 * `/` (as `GET /nodes/by-id-path` takes them; '' for the root); callers resolve it (IdPaths in
 * idPaths.ts). `content` (id surface only): json → the value, markdown → the
 * text, file → `content_base64`.
 */
export function presentNode(n: NodeInfo, surface: NodeSurface, idPath: string, content?: Buffer): PresentedNode {
  const meta = {
    id: n.id,
    name: n.name,
    path: n.path,
    type: n.type,
    size: n.size,
    size_bytes: n.size, // PuppyOne's name for size
    content_hash: n.contentHash,
    mime_type: n.mimeType,
    children_count: n.type === 'folder' ? (n.childrenCount ?? 0) : null,
    version: n.version,
    created_at: n.createdAt,
    updated_at: n.updatedAt,
    id_path: idPath,
  };
  if (surface === 'path') return meta;
  return { ...meta, ...(content ? contentFields(n.type, content) : {}), parent_id: n.parentId, project_id: n.projectId, state: n.state };
}

export type PresentedNode = z.output<typeof entrySchema> & Partial<Omit<z.output<typeof nodeSchema>, keyof z.output<typeof entrySchema>>>;

/** A tree on the path surface: folders whose children were not loaded (max_depth) carry no `children` key. */
export function presentTree(n: TreeNode, idPath: string): PresentedTree {
  const out: PresentedTree = presentNode(n, 'path', idPath);
  const childPath = (id: string) => (idPath === '' ? id : `${idPath}/${id}`);
  if (Array.isArray(n.children)) out.children = n.children.map((c) => presentTree(c, childPath(c.id)));
  else if (n.type !== 'folder') out.children = null;
  return out;
}

export type PresentedTree = PresentedNode & { children?: PresentedTree[] | null };

/** PuppyOne's clients read json as `preview_json` and markdown as `preview_md`: with CNS_PUPPYONE_COMPAT, the same content under their names. */
function contentFields(type: NodeInfo['type'], bytes: Buffer): { content?: unknown; content_base64?: string; preview_json?: unknown; preview_md?: string } {
  if (type === 'json') {
    const content = JSON.parse(bytes.toString('utf8'));
    return { content, ...puppyOneOnly(() => ({ preview_json: content })) };
  }
  if (type === 'markdown') {
    const text = bytes.toString('utf8');
    return { content: text, ...puppyOneOnly(() => ({ preview_md: text })) };
  }
  return { content_base64: bytes.toString('base64') };
}

// What `presentNode` answers on each surface (the response schemas of the OpenAPI document).

export const nodeTypeSchema = z.enum(['folder', 'json', 'markdown', 'file']);

/** The path surface's node (`presentNode(n, 'path', …)`). */
export const entrySchema = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string(),
  type: nodeTypeSchema,
  size: z.number().int(),
  size_bytes: z.number().int().describe('size, by the name PuppyOne clients read'),
  content_hash: z.string().nullable(),
  mime_type: z.string().nullable(),
  children_count: z.number().int().nullable(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  id_path: z.string().describe('the ids from the root joined by "/", as GET /nodes/by-id-path takes them'),
});

/** The id surface's node (`presentNode(n, 'id', …)`). */
export const nodeSchema = entrySchema.extend({
  content: z.unknown().optional().describe('json: the value; markdown: the text (when the caller read it)'),
  content_base64: z.string().optional().describe('file bytes, when asked for'),
  preview_json: z.unknown().optional().describe('with CNS_PUPPYONE_COMPAT: json content again, by the name PuppyOne clients read'),
  preview_md: z.string().optional().describe('with CNS_PUPPYONE_COMPAT: markdown content again, by the name PuppyOne clients read'),
  parent_id: z.string().nullable(),
  project_id: z.string(),
  state: z.enum(['active', 'trashed']),
});

/** A tree node on the path surface (recursive). */
export const treeSchema: z.ZodType<PresentedTree> = z.lazy(() =>
  entrySchema.extend({ children: z.array(treeSchema).nullable().optional().describe('absent when max_depth was reached; null for non-folders') }),
) as unknown as z.ZodType<PresentedTree>;
