import { extname } from 'node:path';
import { usageError } from './errors.ts';

export type NodeType = 'json' | 'markdown' | 'file';
export const NODE_TYPES: readonly NodeType[] = ['json', 'markdown', 'file'];

/** The node type for a path: `--type` wins, else `.json` → json, `.md`/`.markdown` → markdown, anything else → file. */
export function nodeTypeFor(path: string, override?: string): NodeType {
  if (override !== undefined) {
    if (!(NODE_TYPES as readonly string[]).includes(override)) throw usageError(`--type must be one of ${NODE_TYPES.join(', ')} (got "${override}")`);
    return override as NodeType;
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.json') return 'json';
  if (ext === '.md' || ext === '.markdown') return 'markdown';
  return 'file';
}

/** Local bytes → the `content` field of write and bulk-write: parsed JSON, Markdown text, or base64. */
export function contentForApi(type: NodeType, bytes: Buffer, source: string): unknown {
  if (type === 'markdown') return bytes.toString('utf8');
  if (type === 'file') return bytes.toString('base64');
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw usageError(`${source} is not valid JSON (${(err as Error).message}); pass --type file to store it as bytes`);
  }
}
