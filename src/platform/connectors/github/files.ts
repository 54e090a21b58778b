import { createHash } from 'node:crypto';
import { normalizeTargetPath } from '../../../content/paths.ts';

export type FileNode = { type: 'json'; content: unknown } | { type: 'markdown'; content: string } | { type: 'file'; content: Buffer };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A repository file as a node: `.json` parsed as JSON, `.md`/`.markdown` as Markdown, anything
 * else (or a JSON or Markdown file that is not valid UTF-8, or not valid JSON) as bytes.
 */
export function fileNode(path: string, bytes: Buffer): FileNode {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  if (ext !== 'json' && ext !== 'md' && ext !== 'markdown') return { type: 'file', content: bytes };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { type: 'file', content: bytes };
  }
  if (ext !== 'json') return { type: 'markdown', content: text };
  try {
    return { type: 'json', content: JSON.parse(text) };
  } catch {
    return { type: 'file', content: bytes };
  }
}

/** A node's content as the bytes of a repository file (JSON indented by two spaces, with a final newline). */
export function fileBytes(type: 'json' | 'markdown' | 'file', content: unknown): Buffer {
  if (type === 'json') return Buffer.from(`${JSON.stringify(content, null, 2)}\n`);
  if (type === 'markdown') return Buffer.from(String(content));
  if (Buffer.isBuffer(content)) return content;
  if (content instanceof Uint8Array) return Buffer.from(content);
  return Buffer.from(String(content));
}

/** Git's id of a blob with these bytes (what GitHub's trees list). */
export function blobSha(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Whether the content store can hold a file at this path (git-unsafe names, `.cnskeep`, `.trash` are not). */
export function storablePath(path: string): boolean {
  try {
    normalizeTargetPath(path);
    return true;
  } catch {
    return false;
  }
}
