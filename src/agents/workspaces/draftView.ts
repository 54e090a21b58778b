import { isSameOrInside } from '../../content/paths.ts';
import type { DraftEntry } from './workspaceStore.ts';

/**
 * The drafted paths of a workspace, asked by path. The rules of the overlay:
 * - a row at a path replaces whatever the live content has there (a written file or folder), or
 *   hides it (deleted: the path and everything beneath it);
 * - a written FILE row also hides the live content beneath its path (a file has no children);
 * - a path with written rows beneath it is a folder, whatever the live content has there;
 * - no row lies beneath a deleted row (a write beneath one first turns it into the deletions of
 *   the folder's other entries: see WorkspaceContent.write).
 */
export class DraftView {
  private readonly byPath: Map<string, DraftEntry>;

  constructor(readonly entries: readonly DraftEntry[]) {
    this.byPath = new Map(entries.map((e) => [e.path, e]));
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  at(path: string): DraftEntry | undefined {
    return this.byPath.get(path);
  }

  /** A row above `path` hides it: a deletion, or a written file. */
  hidden(path: string): boolean {
    for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
      const row = this.byPath.get(path.slice(0, i));
      if (row && (row.action === 'deleted' || row.type !== 'folder')) return true;
    }
    return false;
  }

  /** Written rows strictly beneath `path` ('' = anywhere). */
  writtenBeneath(path: string): boolean {
    return this.entries.some((e) => e.action === 'written' && e.path !== path && (path === '' || isSameOrInside(e.path, path)));
  }

  /** Rows at or beneath `path`: the live content there is not the whole answer. */
  touches(path: string): boolean {
    return path === '' ? !this.empty : this.entries.some((e) => isSameOrInside(e.path, path));
  }

  /** Rows at or beneath `path`, or above it hiding it. */
  concerns(path: string): boolean {
    return this.touches(path) || this.hidden(path);
  }

  /** Names directly beneath `folder` that rows name (themselves or folders on the way to them). */
  childNames(folder: string): Set<string> {
    const names = new Set<string>();
    const prefix = folder === '' ? '' : `${folder}/`;
    for (const e of this.entries) {
      if (!e.path.startsWith(prefix) || e.path === folder) continue;
      const rest = e.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      // A deleted row deeper down makes no folder on the way to it.
      if (slash >= 0 && e.action === 'deleted') continue;
      names.add(slash < 0 ? rest : rest.slice(0, slash));
    }
    return names;
  }
}
