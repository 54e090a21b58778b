import { api, query } from '../api/client.ts';
import type { Entry, TreeNode, TreePage } from '../api/types.ts';

/** Rows fetched per request: a folder of thousands of children loads a page at a time. */
export const PAGE_SIZE = 200;
/** The API's largest page (GET tree `limit`). */
const MAX_PAGE = 5000;

interface Folder {
  children: Entry[];
  next: string | null;
  loading: boolean;
  error: string | null;
}

/**
 * The loaded part of a project's tree: a folder's children are fetched when it is first opened
 * (`GET tree?max_depth=1`, paged by cursor), and reloaded when the change feed names a path in
 * it. Views subscribe and re-render on any change.
 */
export class TreeStore {
  private folders = new Map<string, Folder>();
  /** The latest request per folder: an older answer arriving late must not replace a newer one. */
  private requests = new Map<string, number>();
  private requestCount = 0;
  readonly expanded = new Set<string>(['']);
  private listeners = new Set<() => void>();

  constructor(private readonly projectId: string) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  folder(path: string): Folder | undefined {
    return this.folders.get(path);
  }

  /** The loaded row at `path`, if its folder has been loaded. */
  entry(path: string): Entry | undefined {
    return this.folders.get(parentOf(path))?.children.find((e) => e.path === path);
  }

  toggle(path: string): void {
    if (this.expanded.has(path)) this.expanded.delete(path);
    else {
      this.expanded.add(path);
      if (!this.folders.has(path)) void this.load(path);
    }
    this.emit();
  }

  /** Opens every folder on the way to `path` (after a creation or a search hit). */
  reveal(path: string): void {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const p = parts.slice(0, i).join('/');
      if (!this.expanded.has(p)) this.toggle(p);
    }
  }

  /**
   * The first page of a folder's children, or with `more` the next one. A reload (after a
   * change) asks for as many rows as were shown, so a folder paged open stays open.
   */
  async load(path: string, more = false): Promise<void> {
    const known = this.folders.get(path);
    const cursor = more ? known?.next ?? undefined : undefined;
    const limit = more ? PAGE_SIZE : Math.min(MAX_PAGE, Math.max(PAGE_SIZE, known?.children.length ?? 0));
    const request = ++this.requestCount;
    this.requests.set(path, request);
    this.folders.set(path, { children: known?.children ?? [], next: known?.next ?? null, loading: true, error: null });
    this.emit();
    try {
      const page = await api<TreePage>('GET', `/content/${this.projectId}/tree${query({ path, max_depth: 1, limit, cursor })}`);
      if (this.requests.get(path) !== request) return;
      const fresh = (page.children ?? []).map(strip);
      const children = more && known ? mergeById(known.children, fresh) : fresh;
      this.folders.set(path, { children, next: page.next_cursor, loading: false, error: null });
    } catch (err) {
      if (this.requests.get(path) !== request) return;
      this.folders.set(path, { children: known?.children ?? [], next: known?.next ?? null, loading: false, error: String((err as Error).message) });
    }
    this.emit();
  }

  /** Reloads the loaded folders that hold (or held) the changed paths. */
  refreshAround(paths: (string | null)[]): void {
    const parents = new Set<string>();
    for (const p of paths) if (p !== null) parents.add(parentOf(p));
    for (const parent of parents) if (this.folders.has(parent)) void this.load(parent);
  }

  /** Reloads every loaded folder (a change too large for its event to list every path). */
  refreshAll(): void {
    for (const path of this.folders.keys()) void this.load(path);
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function strip({ children: _children, ...entry }: TreeNode): Entry {
  return entry;
}

function mergeById(a: Entry[], b: Entry[]): Entry[] {
  const seen = new Set(a.map((e) => e.id));
  return [...a, ...b.filter((e) => !seen.has(e.id))];
}
