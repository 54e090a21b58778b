import type { ContentStore, WritableNodeType, WriteResult } from '../content/contentStore.ts';
import { typeFromName } from '../content/paths.ts';
import { ConflictError } from '../errors/contentErrors.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { messageOf, type ChangeNote } from './message.ts';

/** What writing a node uses: the content store, or a view of it with the same write (an agent's workspace). */
export type NodeWriter = Pick<ContentStore, 'findByPath' | 'write'>;

export interface WriteNodeInput extends ChangeNote {
  path: string;
  type: WritableNodeType;
  /** json: an object or array; markdown: text; file: bytes (or text). */
  content: unknown;
  /** Refuse (409) unless the node is at this version; 0: it must not exist yet. */
  baseVersion?: number;
  /** A create (no version asked for): the node must not exist, and a conflict says it already exists. */
  create?: boolean;
}

export interface WrittenNode extends WriteResult {
  /** The write made the node (its first version), rather than changing or leaving one. */
  created: boolean;
}

/**
 * The type a write gives the node at `path` when the caller names none for certain: an existing
 * node keeps its own; a new one takes `requested`, else the one its name says (.md markdown,
 * .json json, anything else a file).
 */
export function writeTypeOf(content: Pick<ContentStore, 'findByPath'>, projectId: string, path: string, requested?: WritableNodeType): WritableNodeType {
  const existing = content.findByPath(projectId, path);
  if (existing && existing.type !== 'folder') return existing.type;
  return requested ?? typeFromName(path.slice(path.lastIndexOf('/') + 1));
}

/** Creates or updates a json, markdown or file node (missing parent folders are made): one commit. */
export async function writeNode(d: { content: NodeWriter }, g: ContentGrant, input: WriteNodeInput): Promise<WrittenNode> {
  const r = await d.content
    .write(g.projectId, g.actor, {
      path: input.path,
      type: input.type,
      content: input.content,
      baseVersion: input.create ? 0 : input.baseVersion,
      message: messageOf(input, `write ${input.path}`),
    })
    .catch((e: unknown) => {
      // The store words a stale base as versions ("is at version 1, not 0"); a create that found the node says what happened.
      if (input.create && e instanceof ConflictError && typeof e.details.current_version === 'number') {
        throw new ConflictError(`${input.path} already exists`, e.details);
      }
      throw e;
    });
  return { ...r, created: r.changed && r.node.version === 1 };
}
