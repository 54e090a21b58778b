import { EncodedJson } from './encodedJson.ts';
import { ValidationError } from '../errors/contentErrors.ts';
import type { NodeType, WritableNodeType } from './types.ts';

const WRITABLE: readonly string[] = ['json', 'markdown', 'file'];

export function assertWritableType(type: unknown): asserts type is WritableNodeType {
  if (typeof type !== 'string' || !WRITABLE.includes(type)) {
    throw new ValidationError('node_type must be json, markdown or file', { node_type: type });
  }
}

/**
 * The bytes stored for a node. JSON is pretty-printed with 2 spaces and a trailing newline,
 * keys in the order given, so that git diffs are line-based and equal values hash equally.
 */
export function encodeContent(type: WritableNodeType, content: unknown): Buffer {
  switch (type) {
    case 'json':
      // Already in the canonical form, spliced from a previous version (encodedJson.ts).
      if (content instanceof EncodedJson) return content.bytes;
      if (content === null || typeof content !== 'object') {
        throw new ValidationError('json content must be an object or an array');
      }
      try {
        return Buffer.from(JSON.stringify(content, null, 2) + '\n', 'utf8');
      } catch (e) {
        // Circular structures and BigInt values cannot be stored as JSON.
        throw new ValidationError(`json content cannot be serialized: ${(e as Error).message}`);
      }
    case 'markdown':
      if (typeof content !== 'string') throw new ValidationError('markdown content must be a string');
      return Buffer.from(content, 'utf8');
    case 'file':
      if (Buffer.isBuffer(content)) return content;
      if (content instanceof Uint8Array) return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
      if (typeof content === 'string') return Buffer.from(content, 'utf8');
      throw new ValidationError('file content must be bytes');
  }
}

/** Decoded content: the parsed value for json, text for markdown, bytes otherwise. */
export function decodeContent(type: NodeType, bytes: Buffer): unknown {
  if (type === 'json') return JSON.parse(bytes.toString('utf8'));
  if (type === 'markdown') return bytes.toString('utf8');
  return bytes;
}

/** True when pushed bytes can be served as a json node (otherwise they are typed `file`). */
export function isJsonDocument(bytes: Buffer): boolean {
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return v !== null && typeof v === 'object';
  } catch {
    return false;
  }
}
