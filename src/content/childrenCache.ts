import { Lru } from './lru.ts';
import type { NodeInfo } from './types.ts';

/**
 * Folder listings by project and parent id, each valid for one state of the project's index:
 * an entry remembers the head commit it was read at and is served only while the index is still
 * at that commit, so every commit (API write, push, rollback) retires it without invalidation.
 * Bounded by the number of listed nodes held.
 */
export class ChildrenCache {
  private readonly lru: Lru<string, { head: string; nodes: NodeInfo[] }>;

  constructor(maxNodes: number) {
    this.lru = new Lru(Infinity, maxNodes);
  }

  get(projectId: string, parentId: string | null, head: string): NodeInfo[] | undefined {
    const e = this.lru.get(key(projectId, parentId));
    return e && e.head === head ? e.nodes : undefined;
  }

  set(projectId: string, parentId: string | null, head: string, nodes: NodeInfo[]): void {
    this.lru.set(key(projectId, parentId), { head, nodes }, nodes.length + 1);
  }

  /** Drops the project's listings (its index was rebuilt or deleted, possibly at the same head). */
  forgetProject(projectId: string): void {
    const prefix = key(projectId, null);
    for (const k of [...this.lru.keys()]) if (k.startsWith(prefix)) this.lru.delete(k);
  }

  clear(): void {
    this.lru.clear();
  }
}

const key = (projectId: string, parentId: string | null) => `${projectId}\0${parentId ?? ''}`;
