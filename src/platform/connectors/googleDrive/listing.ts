import type { ConnectorContext } from '../../runtime/connector.ts';
import { FOLDER, listChildren, type Corpus, type DriveFile } from './api.ts';
import type { FolderTree } from './tree.ts';

/** Folders named in one `files.list` query (Drive caps a query's length; 20 ids stay far below). */
const FOLDERS_PER_QUERY = 20;

/**
 * Lists the subtrees of `starts` (folders already in `tree`) breadth first: every folder found
 * joins the tree under its first parent in it, and every other file is returned once (a file in
 * two listed folders is listed twice by Drive).
 */
export async function listSubtrees(ctx: ConnectorContext, corpus: Corpus, tree: FolderTree, starts: string[]): Promise<DriveFile[]> {
  const files = new Map<string, DriveFile>();
  const listed = new Set<string>();
  let level = starts;
  while (level.length > 0) {
    const nextLevel: string[] = [];
    for (let i = 0; i < level.length; i += FOLDERS_PER_QUERY) {
      const group = level.slice(i, i + FOLDERS_PER_QUERY);
      for (const id of group) listed.add(id);
      for await (const { items } of listChildren(ctx, corpus, group)) {
        for (const f of items) {
          if (f.mimeType !== FOLDER) {
            files.set(f.id, f);
            continue;
          }
          if (listed.has(f.id) || nextLevel.includes(f.id)) continue;
          const parent = tree.parentIn(f.parents);
          if (parent === null) continue;
          tree.set(f.id, parent, f.name);
          nextLevel.push(f.id);
        }
      }
    }
    level = nextLevel;
  }
  return [...files.values()];
}
