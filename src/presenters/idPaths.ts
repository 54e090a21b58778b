import type { ContentStore, NodeInfo } from '../content/contentStore.ts';
import { presentNode, presentTree, type NodeSurface } from './node.ts';

/** What resolving id paths reads: the ids from the root down to a folder. */
export type IdPathReader = Pick<ContentStore, 'idPathOf'>;

/**
 * Resolves `id_path` (the ids from the root joined by `/`) for the nodes of one answer: a node's
 * is its parent's plus its own id, and each parent is resolved once (one recursive query in the
 * index), so a listing of a thousand siblings costs one query, not a thousand.
 */
export class IdPaths {
  private readonly folders = new Map<string, string>();
  constructor(private readonly store: IdPathReader) {}

  of(n: Pick<NodeInfo, 'id' | 'parentId' | 'projectId'>): string {
    if (!n.id) return ''; // the project root (or the trash folder) has no id
    return n.parentId === null ? n.id : `${this.folder(n.projectId, n.parentId)}/${n.id}`;
  }

  private folder(projectId: string, id: string): string {
    let p = this.folders.get(id);
    if (p === undefined) {
      p = this.store.idPathOf(projectId, id).join('/');
      this.folders.set(id, p);
    }
    return p;
  }
}

/** The node presenter of one answer, with its id paths resolved (node.ts). */
export function nodePresenter(store: IdPathReader, surface: NodeSurface) {
  const ids = new IdPaths(store);
  return {
    node: (n: NodeInfo, content?: Buffer) => presentNode(n, surface, ids.of(n), content),
    tree: (root: Parameters<typeof presentTree>[0]) => presentTree(root, ids.of(root)),
  };
}

export type NodePresenter = ReturnType<typeof nodePresenter>;
