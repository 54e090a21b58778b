import type { ContentStore, Mutation, WritableNodeType } from '../content/contentStore.ts';
import { ConflictError } from '../content/contentStore.ts';
import { typeFromName } from '../content/paths.ts';

/** A local change pushed by the folder client (paths are project paths, content base64). */
export type PushOp =
  | { action: 'write'; path: string; content: string; node_type?: WritableNodeType; base_version?: number }
  | { action: 'delete'; path: string; base_version?: number }
  | { action: 'move'; from: string; path: string; base_version?: number };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The store content of a pushed file. The extension gives the type, but a `.json` that does not
 * parse to an object or array, or a `.md` that is not UTF-8, is kept byte for byte as a `file`:
 * a half-saved document must never make a push fail or lose its bytes.
 */
export function storedContent(path: string, bytes: Buffer, requested?: WritableNodeType): { type: WritableNodeType; content: unknown } {
  const type = requested ?? typeFromName(path.slice(path.lastIndexOf('/') + 1));
  if (type === 'json') {
    try {
      const value: unknown = JSON.parse(utf8.decode(bytes));
      if (value !== null && typeof value === 'object') return { type, content: value };
    } catch {
      /* not a JSON document: keep the bytes */
    }
    return { type: 'file', content: bytes };
  }
  if (type === 'markdown') {
    try {
      return { type, content: utf8.decode(bytes) };
    } catch {
      return { type: 'file', content: bytes };
    }
  }
  return { type: 'file', content: bytes };
}

/**
 * Mutations for one push (applied as one commit). Writes carry their base version to the store;
 * deletes and moves are checked here. Deleting what is already gone is not an error (two clients
 * may delete the same file), and a delete is always soft: the node goes to the project's trash.
 */
export function mutationsFor(store: ContentStore, projectId: string, ops: PushOp[]): Mutation[] {
  const out: Mutation[] = [];
  for (const op of ops) {
    if (op.action === 'write') {
      const { type, content } = storedContent(op.path, Buffer.from(op.content, 'base64'), op.node_type);
      const m: Mutation = { op: 'write', path: op.path, type, content };
      if (op.base_version !== undefined) m.baseVersion = op.base_version;
      out.push(m);
      continue;
    }
    const at = op.action === 'move' ? op.from : op.path;
    const node = store.findByPath(projectId, at);
    if (!node || node.state !== 'active') {
      if (op.action === 'delete') continue;
      throw new ConflictError(`${at} no longer exists`, { path: at });
    }
    if (op.base_version !== undefined && node.version !== op.base_version) {
      throw new ConflictError(`${at} is at version ${node.version}, not ${op.base_version}`, {
        path: at,
        current_version: node.version,
        base_version: op.base_version,
      });
    }
    out.push(op.action === 'delete' ? { op: 'remove', path: op.path } : { op: 'move', from: op.from, to: op.path });
  }
  return out;
}
