import { safeName } from '../../../ingest/converters/names.ts';

/**
 * The folders under the synced folder, as Drive's parent links: a file's path is its parent
 * folder's path and its name. A folder whose chain of parents does not reach the root (moved
 * out, trashed, or an ancestor gone) is not in the tree.
 */
export class FolderTree {
  constructor(
    readonly root: string,
    /** id → [parent id, name] */
    readonly folders: Record<string, [string, string]> = {},
  ) {}

  /** The folder's path under the root ('' for the root itself), or null when it is not in the tree. */
  folderPath(id: string): string | null {
    const segments: string[] = [];
    const seen = new Set<string>();
    let at = id;
    while (at !== this.root) {
      const f = this.folders[at];
      // A cycle cannot happen in Drive, but a stale tree must not loop forever.
      if (!f || seen.has(at)) return null;
      seen.add(at);
      segments.push(safeName(f[1]));
      at = f[0];
    }
    return segments.reverse().join('/');
  }

  has(id: string): boolean {
    return this.folderPath(id) !== null;
  }

  /**
   * The parent under which a file (or folder) is placed: the first of its parents that is in
   * the tree (a file may have several parents in older Drives), or null when none is.
   */
  parentIn(parents: string[] | undefined): string | null {
    return parents?.find((p) => this.has(p)) ?? null;
  }

  set(id: string, parent: string, name: string): void {
    this.folders[id] = [parent, name];
  }

  remove(id: string): void {
    delete this.folders[id];
  }

  /** Drops the folders cut off from the root (descendants of a folder that left). */
  prune(): void {
    for (const id of Object.keys(this.folders)) if (!this.has(id)) delete this.folders[id];
  }
}

/** `folder/name`, or `name` at the root. */
export const joinPath = (folder: string, name: string): string => (folder === '' ? name : `${folder}/${name}`);
