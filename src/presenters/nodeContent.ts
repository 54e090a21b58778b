import { z } from 'zod';
import type { NodeInfo } from '../content/contentStore.ts';
import { presentContent } from './content.ts';

/**
 * A node's current content as PuppyOne's web client reads it (`GET /nodes/{id}/content`): json as
 * `content_json`, markdown as `content_text`; a file's bytes are not inlined but reached through
 * `download_url` (the same presigned address `GET /nodes/{id}/download` gives). A folder has no
 * content: every content field is null.
 */
export function presentNodeContent(node: NodeInfo, bytes: Buffer | null, downloadUrl: string | null) {
  const content = bytes && node.type !== 'file' ? presentContent(node.type, bytes) : {};
  return {
    node_id: node.id,
    node_type: node.type,
    version: node.version,
    content_hash: node.type === 'folder' ? null : node.contentHash,
    content_json: node.type === 'json' ? (content.content ?? null) : null,
    content_text: content.content_text ?? null,
    download_url: downloadUrl,
    size_bytes: node.size,
  };
}

export const nodeContentSchema = z.object({
  node_id: z.string(),
  node_type: z.enum(['folder', 'json', 'markdown', 'file']),
  version: z.number().int().describe('the node version this content is'),
  content_hash: z.string().nullable(),
  content_json: z.unknown().describe('json nodes: the value; otherwise null'),
  content_text: z.string().nullable().describe('markdown nodes: the text; otherwise null'),
  download_url: z.string().nullable().describe('file nodes: a presigned address of the bytes (as GET /nodes/{id}/download); otherwise null'),
  size_bytes: z.number().int(),
});
