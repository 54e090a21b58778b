import type { ExportedEntry } from '../../content/git/exportTree.ts';

export interface PristineEntry {
  kind: 'file' | 'dir';
  size: number;
}

/**
 * What a workspace held when it was made (the exported subtree), for comparing a folder with it:
 * entries by path and the children of each folder.
 */
export class PristineTree {
  readonly entries = new Map<string, PristineEntry>();
  private readonly kids = new Map<string, string[]>();
  /** Bytes of the files. */
  readonly bytes: number;
  /** Bytes the files take on a tmpfs (whole 4 KiB pages), what a copy of them needs. */
  readonly pageBytes: number;

  /** `entries`: what the export wrote (parents before their children). */
  constructor(entries: Iterable<ExportedEntry>) {
    let bytes = 0;
    let pages = 0;
    for (const e of entries) {
      const path = e.path;
      if (path === '' || this.entries.has(path)) continue;
      this.entries.set(path, { kind: e.kind, size: e.size });
      const slash = path.lastIndexOf('/');
      const parent = slash < 0 ? '' : path.slice(0, slash);
      const list = this.kids.get(parent);
      if (list) list.push(path.slice(slash + 1));
      else this.kids.set(parent, [path.slice(slash + 1)]);
      if (e.kind === 'file') {
        bytes += e.size;
        pages += Math.ceil(e.size / 4096);
      }
    }
    this.bytes = bytes;
    this.pageBytes = pages * 4096;
  }

  get(path: string): PristineEntry | undefined {
    return this.entries.get(path);
  }

  children(dir: string): readonly string[] {
    return this.kids.get(dir) ?? [];
  }

  /** Every entry beneath folder `dir`, depth first. */
  *descendants(dir: string): Generator<[string, PristineEntry]> {
    for (const name of this.children(dir)) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const e = this.entries.get(path)!;
      yield [path, e];
      if (e.kind === 'dir') yield* this.descendants(path);
    }
  }
}
