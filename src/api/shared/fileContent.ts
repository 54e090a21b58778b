import { validationError } from '../../http/errors.ts';

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * JSON routes carry `file` content as base64 text; the store takes bytes. json and markdown
 * pass through unchanged (the store checks their shape).
 */
export function contentForStore(nodeType: string, content: unknown, field = 'content'): unknown {
  if (nodeType !== 'file') return content;
  if (typeof content !== 'string') throw validationError('file content must be base64 text.', [{ field, message: 'expected base64 string' }]);
  const compact = content.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !base64.test(compact)) {
    throw validationError('file content is not valid base64.', [{ field, message: 'invalid base64' }]);
  }
  return Buffer.from(compact, 'base64');
}
