import { z } from 'zod';
import type { NodeInfo } from '../../content/contentStore.ts';

/**
 * A node as the id surface shows it: the fields of spec 2.1 (id, name, type, content, parent_id,
 * project_id, created_at, updated_at) plus path, version, content_hash, size and mime_type.
 * `content` is given only when the caller read it (json: the value, markdown: the text); file
 * bytes come as `content_base64`.
 */
export function presentNode(n: NodeInfo, content?: Buffer) {
  return {
    id: n.id,
    name: n.name,
    type: n.type,
    ...(content ? contentFields(n.type, content) : {}),
    parent_id: n.parentId,
    project_id: n.projectId,
    path: n.path,
    version: n.version,
    content_hash: n.contentHash,
    size: n.size,
    mime_type: n.mimeType,
    state: n.state,
    children_count: n.type === 'folder' ? (n.childrenCount ?? 0) : null,
    created_at: n.createdAt,
    updated_at: n.updatedAt,
  };
}

export type PresentedNode = ReturnType<typeof presentNode>;

function contentFields(type: NodeInfo['type'], bytes: Buffer): { content?: unknown; content_base64?: string } {
  if (type === 'json') return { content: JSON.parse(bytes.toString('utf8')) };
  if (type === 'markdown') return { content: bytes.toString('utf8') };
  return { content_base64: bytes.toString('base64') };
}

/** What `presentNode` answers (the response schema in the OpenAPI document). */
export const nodeSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['folder', 'json', 'markdown', 'file']),
  content: z.unknown().optional().describe('json: the value; markdown: the text (when the caller read it)'),
  content_base64: z.string().optional().describe('file bytes, when asked for'),
  parent_id: z.string().nullable(),
  project_id: z.string(),
  path: z.string(),
  version: z.number().int(),
  content_hash: z.string().nullable(),
  size: z.number().int(),
  mime_type: z.string().nullable(),
  state: z.enum(['active', 'trashed']),
  children_count: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
