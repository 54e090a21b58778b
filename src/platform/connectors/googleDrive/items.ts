import type { ConnectorContext, KnownItem, SourceChange } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import type { DriveFile } from './api.ts';
import { fetchContent } from './content.ts';
import { convertible, kindOf, nodeName, versionOf, type Kind } from './kinds.ts';
import { joinPath, type FolderTree } from './tree.ts';

/** What an item remembers between runs, to be placed again when its folders move. */
export interface DriveMeta {
  /** Drive's parents of the file. */
  parents: string[];
  /** The one it was placed under (kept while it stays in the tree, so a second parent joining does not move it). */
  parent: string;
  /** Drive's name (a rename changes it). */
  name: string;
  mimeType: string;
  /** The node's name in its folder (its extension depends on what the file was made into). */
  node: string;
  /** Whether `convert` was on when it was made (turning it on or off makes it again). */
  convert: boolean;
}

/** A file in the tree whose content is to be fetched. */
export interface Wanted {
  file: DriveFile;
  kind: Kind;
  /** The folder it is placed in, and that folder's path ('' for the root). */
  parent: string;
  folder: string;
  sourceVersion: string;
  convert: boolean;
}

export type Verdict = { op: 'keep' } | { op: 'fetch'; wanted: Wanted } | { op: 'delete' } | { op: 'ignore' };

export function metaOf(k: KnownItem): DriveMeta | null {
  const m = k.meta as Partial<DriveMeta>;
  return Array.isArray(m.parents) && typeof m.name === 'string' && typeof m.mimeType === 'string' && typeof m.node === 'string'
    ? {
        parents: m.parents.filter((p): p is string => typeof p === 'string'),
        parent: typeof m.parent === 'string' ? m.parent : '',
        name: m.name,
        mimeType: m.mimeType,
        node: m.node,
        convert: m.convert === true,
      }
    : null;
}

/**
 * What a file's current state means here: outside the tree (or trashed), it leaves if it was
 * synced and is ignored otherwise; in the tree with the same version, name and folder as
 * synced, nothing is fetched; otherwise (new, edited, renamed, moved) its content is fetched.
 */
export function verdict(ctx: ConnectorContext, tree: FolderTree, file: DriveFile, convert: boolean): Verdict {
  const known = ctx.known.get(file.id);
  const meta = known ? metaOf(known) : null;
  const kind = kindOf(file, convert);
  const parent = file.trashed ? null : placeIn(tree, file.parents, meta?.parent);
  if (!kind || parent === null) return known ? { op: 'delete' } : { op: 'ignore' };
  const folder = tree.folderPath(parent)!;
  const sourceVersion = versionOf(file);
  if (known && meta && known.sourceVersion === sourceVersion && meta.name === file.name && (meta.convert === convert || !convertible(file)) && known.path === joinPath(folder, meta.node)) {
    return { op: 'keep' };
  }
  return { op: 'fetch', wanted: { file, kind, parent, folder, sourceVersion, convert } };
}

/** The parent a file is placed under: the one it had while that stays in the tree, else the first in the tree. */
function placeIn(tree: FolderTree, parents: string[] | undefined, previous: string | undefined): string | null {
  if (previous && parents?.includes(previous) && tree.has(previous)) return previous;
  return tree.parentIn(parents);
}

/**
 * A synced item placed again after its folders changed (renamed, moved, gone): it leaves when
 * none of its parents is in the tree any more; it moves (so its content is fetched again: the
 * runtime writes a moved item from its content) when its path changed; else it stays.
 */
export function replaced(tree: FolderTree, k: KnownItem, convert: boolean): Verdict {
  const meta = metaOf(k);
  if (!meta) return { op: 'keep' };
  const parent = placeIn(tree, meta.parents, meta.parent);
  if (parent === null) return { op: 'delete' };
  const folder = tree.folderPath(parent)!;
  if (joinPath(folder, meta.node) === k.path) return { op: 'keep' };
  const file: DriveFile = { id: k.sourceId, name: meta.name, mimeType: meta.mimeType, parents: meta.parents };
  const kind = kindOf(file, convert);
  return kind ? { op: 'fetch', wanted: { file, kind, parent, folder, sourceVersion: k.sourceVersion, convert } } : { op: 'delete' };
}

/** The item of a wanted file, its content fetched; a file gone meanwhile (404) leaves. */
export async function itemOf(ctx: ConnectorContext, w: Wanted): Promise<SourceChange | null> {
  let content;
  try {
    content = await fetchContent(ctx, w.file, w.kind);
  } catch (err) {
    if (err instanceof ProviderError && err.status === 404) return ctx.known.get(w.file.id) ? { kind: 'delete', sourceId: w.file.id } : null;
    throw err;
  }
  const node = nodeName(w.file, content.kind);
  const meta: DriveMeta = { parents: w.file.parents ?? [], parent: w.parent, name: w.file.name, mimeType: w.file.mimeType, node, convert: w.convert };
  return {
    kind: 'upsert',
    item: { sourceId: w.file.id, path: joinPath(w.folder, node), type: content.type, content: content.content, sourceVersion: w.sourceVersion, meta: { ...meta } },
  };
}
