import { api, query } from '../api/client.ts';
import type { ChangeEvent } from '../api/changeFeed.ts';
import type { NodeType } from '../api/types.ts';
import { findPaths, normalizeQuery, type Match } from './fuzzy.ts';

/** Nodes per page: 100,000 files are 3 requests of about 1.5 MB. */
const PAGE = 50_000;

interface PathsPage {
  files: { path: string; type: NodeType }[];
  next_cursor: string | null;
}

/**
 * Every file path of a project, for quick open: read once through `GET /content/{id}/paths`
 * (the tree's walk and cursors, paths and types only: a tree page carries some 750 bytes of
 * metadata a node, 75 MB for 100,000 files, where a path is a few dozen bytes), the first time
 * the palette opens, then kept current from the change feed the
 * workspace follows (a path added, moved, or gone; a folder moved renames everything beneath it;
 * an event too large to list its paths, or a folder coming back from the trash, reads it all again).
 * Searching works on what is loaded so far while the pages arrive.
 */
export class PathIndex {
  private types = new Map<string, NodeType>();
  private paths: string[] = [];
  private lower: string[] = [];
  private dirty = false;
  /** The last search's query and the indexes that passed it: a longer query searches only those. */
  private last: { q: string; passed: number[] } | null = null;
  state: 'idle' | 'loading' | 'ready' | 'error' = 'idle';
  /** Bumped on every change: what a view's memo depends on. */
  revision = 0;
  error: string | null = null;
  private pending: ChangeEvent[] = [];
  private generation = 0;
  private listeners = new Set<() => void>();

  constructor(private readonly projectId: string) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.types.size;
  }

  /** Starts reading the project's paths (once; again after `reload`). */
  ensureLoaded(): void {
    if (this.state === 'idle' || this.state === 'error') void this.load();
  }

  private async load(): Promise<void> {
    const generation = ++this.generation;
    this.state = 'loading';
    this.error = null;
    this.types.clear();
    this.changed();
    try {
      let cursor: string | undefined;
      do {
        const page = await api<PathsPage>('GET', `/content/${this.projectId}/paths${query({ limit: PAGE, cursor })}`);
        if (generation !== this.generation) return;
        for (const f of page.files) this.types.set(f.path, f.type);
        cursor = page.next_cursor ?? undefined;
        this.changed();
      } while (cursor);
      this.state = 'ready';
      this.warmUp();
      // Changes that arrived while the pages were read: applied over them (each is idempotent).
      const pending = this.pending;
      this.pending = [];
      for (const event of pending) this.apply(event);
    } catch (err) {
      if (generation !== this.generation) return;
      this.state = 'error';
      this.error = (err as Error).message;
    }
    this.changed();
  }

  /** A change from the live feed. */
  apply(event: ChangeEvent): void {
    if (this.state === 'idle') return;
    if (this.state === 'loading') {
      this.pending.push(event);
      return;
    }
    if (event.truncated) return void this.load();
    for (const c of event.changes) {
      const gone = c.operation === 'trash' || c.operation === 'delete' || isTrash(c.path);
      const folder = c.node_type === 'folder';
      if (folder && (c.operation === 'restore' || c.operation === 'rollback')) return void this.load();
      if (c.old_path && c.old_path !== c.path) this.remove(c.old_path, folder, gone ? null : c.path);
      if (gone) this.remove(c.path, folder, null);
      else if (!folder && !isTrash(c.path)) this.types.set(c.path, c.node_type as NodeType);
    }
    this.changed();
  }

  /** Drops `path` (and, for a folder, everything beneath it), or moves it to `to`. */
  private remove(path: string, folder: boolean, to: string | null): void {
    if (!folder) {
      const type = this.types.get(path);
      this.types.delete(path);
      if (to !== null && type && !isTrash(to)) this.types.set(to, type);
      return;
    }
    const prefix = `${path}/`;
    for (const [p, type] of [...this.types]) {
      if (!p.startsWith(prefix)) continue;
      this.types.delete(p);
      if (to !== null && !isTrash(to)) this.types.set(to + p.slice(path.length), type);
    }
  }

  /** The best `limit` files for what was typed, best first (empty text: none). */
  search(text: string, limit: number): { path: string; type: NodeType; positions: number[] }[] {
    const q = normalizeQuery(text);
    if (!q) return [];
    if (this.dirty) {
      this.paths = [...this.types.keys()];
      this.lower = this.paths.map((p) => p.toLowerCase());
      this.dirty = false;
      this.last = null;
    }
    const narrow = this.last && q.startsWith(this.last.q) ? this.last.passed : undefined;
    const { matches, passed } = findPaths(q, this.paths, this.lower, limit, narrow);
    this.last = { q, passed };
    return matches.map((m: Match) => ({ path: this.paths[m.index]!, type: this.types.get(this.paths[m.index]!)!, positions: m.positions }));
  }

  /** One throwaway search so the first keystroke does not pay for the matcher's compilation. */
  private warmUp(): void {
    for (const q of ['e', 'ea', 'md']) this.search(q, 5);
    this.last = null;
  }

  private changed(): void {
    this.revision++;
    this.dirty = true;
    for (const l of this.listeners) l();
  }
}

function isTrash(path: string): boolean {
  return path === '.trash' || path.startsWith('.trash/');
}
