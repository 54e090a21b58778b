import type { Repo } from './git/repo.ts';
import type { ObjectType } from './git/objects.ts';
import { PLACEHOLDER } from './paths.ts';
import type { TimeSlice } from './timeSlice.ts';

/** Id of the empty blob: the content of every folder placeholder. */
export const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
export const TREE_MODE = '40000';
export const FILE_MODE = '100644';

export class BlobEntry {
  constructor(
    readonly oid: string,
    readonly mode: string = FILE_MODE,
  ) {}
}

/** A git tree held in memory. `entries` is null until loaded; `oid` is null while dirty. */
export class Tree {
  order: string[] | null = null;
  /**
   * The serialized tree of the last hash, with the offset of each entry's 20-byte id: while the
   * set of names (and modes) stays the same, hashing patches the ids of `changed` names in place
   * instead of re-serializing a folder of thousands of entries on every write.
   */
  raw: Buffer | null = null;
  idAt: Map<string, number> | null = null;
  changed: Set<string> | null = null;
  constructor(
    public oid: string | null,
    public entries: Map<string, Entry> | null,
  ) {}
}

export type Entry = Tree | BlobEntry;

/**
 * Thrown inside the synchronous write section when a tree has not been read yet. It names the
 * tree object itself: after the failed mutation is reverted it may live at another path.
 */
export class NeedsLoad extends Error {
  constructor(readonly tree: Tree) {
    super('tree not loaded');
  }
}

/**
 * The current tree of a project's `main`, kept in memory so that a write never re-reads trees:
 * subtrees load lazily, edits mark the trees on their path dirty, and hashing rewrites only those.
 * Every edit is recorded in an undo log so that a failed mutation leaves the tree as it was.
 */
export class WorkTree {
  private undo: (() => void)[] | null = null;

  constructor(public root: Tree) {}

  /** Starts recording undo steps (one commit). */
  begin(): void {
    this.undo = [];
  }

  /** Keeps the edits since begin(). */
  keep(): void {
    this.undo = null;
  }

  /** Reverts every edit since begin(). */
  revert(): void {
    const steps = this.undo ?? [];
    this.undo = null;
    for (let i = steps.length - 1; i >= 0; i--) steps[i]();
  }

  /** The entry at `path` ('' is the root), undefined when absent. Throws NeedsLoad. */
  get(path: string): Entry | undefined {
    if (path === '') return this.root;
    let t: Tree = this.root;
    const segs = path.split('/');
    for (let i = 0; i < segs.length; i++) {
      if (!t.entries) throw new NeedsLoad(t);
      const e = t.entries.get(segs[i]);
      if (i === segs.length - 1) return e;
      if (!(e instanceof Tree)) return undefined;
      t = e;
    }
    return undefined;
  }

  /** Puts `entry` at `path`, creating missing parent trees. */
  set(path: string, entry: Entry): void {
    const segs = path.split('/');
    const name = segs.pop() as string;
    const parent = this.dirtyChain(segs, true) as Tree;
    this.put(parent, name, entry);
    if (entry instanceof Tree && entry.entries && entry.entries.size === 0) {
      this.put(entry, PLACEHOLDER, new BlobEntry(EMPTY_BLOB));
    }
    this.fixPlaceholder(parent, segs.length > 0);
  }

  /** Removes the entry at `path` and returns it (undefined when absent). */
  remove(path: string): Entry | undefined {
    const segs = path.split('/');
    const name = segs.pop() as string;
    const parent = this.dirtyChain(segs, false);
    if (!parent) return undefined;
    const prev = parent.entries!.get(name);
    if (prev === undefined) return undefined;
    this.put(parent, name, undefined);
    this.fixPlaceholder(parent, segs.length > 0);
    return prev;
  }

  /** Replaces the whole tree (project rollback), undoably. */
  replaceRoot(root: Tree): void {
    const prev = this.root;
    this.undo?.push(() => {
      this.root = prev;
    });
    this.root = root;
  }

  /** Hashes dirty trees bottom-up, writing each as an object; reports every tree written. */
  hash(write: (type: ObjectType, content: Buffer) => string, onTree: (path: string, oid: string) => void): string {
    return hashTree(this.root, '', write, onTree);
  }

  /** Like hash(), yielding to the event loop between slices (a commit touching thousands of folders or entries). */
  hashSliced(write: (type: ObjectType, content: Buffer) => string, onTree: (path: string, oid: string) => void, slice: TimeSlice): Promise<string> {
    return hashTreeSliced(this.root, '', write, onTree, slice);
  }

  /** Reads the trees along `path` (and the tree at `path` itself) that are not loaded yet. */
  async load(repo: Repo, path: string): Promise<void> {
    let t = this.root;
    const segs = path === '' ? [] : path.split('/');
    for (let i = 0; ; i++) {
      if (!t.entries) await loadTree(repo, t);
      if (i === segs.length) return;
      const next = t.entries!.get(segs[i]);
      if (!(next instanceof Tree)) return;
      t = next;
    }
  }

  /** Marks the trees along `segs` dirty (undoably) and returns the last one. */
  private dirtyChain(segs: string[], create: boolean): Tree | undefined {
    let t = this.root;
    this.markDirty(t);
    for (let i = 0; i < segs.length; i++) {
      if (!t.entries) throw new NeedsLoad(t);
      let next = t.entries.get(segs[i]);
      if (!(next instanceof Tree)) {
        if (!create) return undefined;
        next = new Tree(null, new Map());
        this.put(t, segs[i], next);
        this.fixPlaceholder(t, i > 0);
      } else {
        (t.changed ??= new Set()).add(segs[i]);
      }
      t = next;
      this.markDirty(t);
    }
    if (!t.entries) throw new NeedsLoad(t);
    return t;
  }

  private markDirty(t: Tree): void {
    if (t.oid === null) return;
    const prev = t.oid;
    this.undo?.push(() => {
      t.oid = prev;
      t.raw = null;
    });
    t.oid = null;
  }

  private put(t: Tree, name: string, entry: Entry | undefined): void {
    const map = t.entries!;
    const prev = map.get(name);
    const prevOrder = t.order;
    this.undo?.push(() => {
      if (prev === undefined) map.delete(name);
      else map.set(name, prev);
      t.order = prevOrder;
      t.raw = null;
    });
    if (entry === undefined) map.delete(name);
    else map.set(name, entry);
    if (prev === undefined || entry === undefined || prev instanceof Tree !== entry instanceof Tree) {
      t.order = null;
      t.raw = null;
    } else if (prev instanceof BlobEntry && entry instanceof BlobEntry && prev.mode !== entry.mode) {
      t.raw = null;
    } else {
      (t.changed ??= new Set()).add(name);
    }
    this.markDirty(t);
  }

  /** Empty folders hold the placeholder; folders with content do not. The root never does. */
  private fixPlaceholder(t: Tree, isFolder: boolean): void {
    if (!isFolder) return;
    const map = t.entries!;
    if (map.size === 0) this.put(t, PLACEHOLDER, new BlobEntry(EMPTY_BLOB));
    else if (map.size > 1 && map.has(PLACEHOLDER)) this.put(t, PLACEHOLDER, undefined);
  }
}

export async function loadTree(repo: Repo, t: Tree): Promise<void> {
  if (t.entries || !t.oid) return;
  const map = new Map<string, Entry>();
  for (const e of await repo.readTree(t.oid)) {
    map.set(e.name, e.mode === TREE_MODE ? new Tree(e.oid, null) : new BlobEntry(e.oid, e.mode));
  }
  t.entries = map;
}

function hashTree(
  t: Tree,
  path: string,
  write: (type: ObjectType, content: Buffer) => string,
  onTree: (path: string, oid: string) => void,
): string {
  if (t.oid) return t.oid;
  const map = t.entries!;
  const child = (name: string, e: Entry) => (e instanceof Tree ? hashTree(e, path === '' ? name : `${path}/${name}`, write, onTree) : e.oid);
  if (t.raw && t.idAt) {
    for (const name of t.changed ?? []) {
      const e = map.get(name);
      const at = t.idAt.get(name);
      if (e === undefined || at === undefined) {
        t.raw = null;
        break;
      }
      t.raw.write(child(name, e), at, 'hex');
    }
  }
  if (!t.raw || !t.idAt) {
    const raw = new RawTree();
    for (const name of (t.order ??= sortedNames(map))) {
      const e = map.get(name)!;
      raw.add(name, e, child(name, e));
    }
    raw.finish(t);
  }
  t.changed = null;
  t.oid = write('tree', t.raw!);
  onTree(path, t.oid);
  return t.oid;
}

/** hashTree's full re-serialization, with a yield point per entry (only large commits come here). */
async function hashTreeSliced(
  t: Tree,
  path: string,
  write: (type: ObjectType, content: Buffer) => string,
  onTree: (path: string, oid: string) => void,
  slice: TimeSlice,
): Promise<string> {
  if (t.oid) return t.oid;
  const map = t.entries!;
  const raw = new RawTree();
  for (const name of (t.order ??= sortedNames(map))) {
    await slice.tick();
    const e = map.get(name)!;
    raw.add(name, e, e instanceof Tree ? await hashTreeSliced(e, path === '' ? name : `${path}/${name}`, write, onTree, slice) : e.oid);
  }
  raw.finish(t);
  t.changed = null;
  t.oid = write('tree', t.raw!);
  onTree(path, t.oid);
  return t.oid;
}

/**
 * A git tree object being serialized, entry by entry in tree order, remembering where each
 * entry's object id sits so that a later change can patch the bytes in place.
 */
class RawTree {
  private readonly parts: Buffer[] = [];
  private readonly idAt = new Map<string, number>();
  private offset = 0;

  add(name: string, e: Entry, oid: string): void {
    const head = Buffer.from(`${e instanceof Tree ? TREE_MODE : e.mode} ${name}\0`, 'utf8');
    this.offset += head.length;
    this.idAt.set(name, this.offset);
    this.offset += 20;
    this.parts.push(head, Buffer.from(oid, 'hex'));
  }

  finish(t: Tree): Buffer {
    t.idAt = this.idAt;
    return (t.raw = Buffer.concat(this.parts));
  }
}

/** Git's tree order: byte order of the UTF-8 names, with a '/' appended to tree names. */
function sortedNames(map: Map<string, Entry>): string[] {
  const keyed = [...map].map(([name, e]) => ({ name, key: Buffer.from(e instanceof Tree ? name + '/' : name, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map((k) => k.name);
}

/** Builds a fully loaded tree from (path, blob) pairs and folder paths (used by project rollback). */
export function buildTree(files: { path: string; oid: string; mode?: string }[], folders: string[]): Tree {
  const root = new Tree(null, new Map());
  const dir = (path: string): Tree => {
    let t = root;
    if (path === '') return t;
    for (const seg of path.split('/')) {
      let next = t.entries!.get(seg);
      if (!(next instanceof Tree)) {
        next = new Tree(null, new Map());
        t.entries!.set(seg, next);
      }
      t = next;
    }
    return t;
  };
  for (const f of folders) dir(f);
  for (const f of files) {
    const i = f.path.lastIndexOf('/');
    dir(i < 0 ? '' : f.path.slice(0, i)).entries!.set(f.path.slice(i + 1), new BlobEntry(f.oid, f.mode ?? FILE_MODE));
  }
  const fill = (t: Tree, isFolder: boolean): void => {
    if (isFolder && t.entries!.size === 0) t.entries!.set(PLACEHOLDER, new BlobEntry(EMPTY_BLOB));
    for (const e of t.entries!.values()) if (e instanceof Tree) fill(e, true);
  };
  fill(root, false);
  return root;
}
