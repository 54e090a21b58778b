import { mkdirSync } from 'node:fs';
import { readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asText } from './fileMerge.ts';

/**
 * The last synced content of each text file (DIR/.cns/base/<blob id>), the common ancestor of a
 * three-way merge when both sides changed. Binary files have no base: they are never merged.
 */
export class BaseStore {
  private ready = false;

  constructor(private readonly dir: string) {}

  async put(hash: string, bytes: Buffer): Promise<void> {
    if (asText(bytes) === null) return;
    if (!this.ready) {
      mkdirSync(this.dir, { recursive: true });
      this.ready = true;
    }
    await writeFile(join(this.dir, hash), bytes, { flag: 'w' });
  }

  async get(hash: string): Promise<Buffer | null> {
    try {
      return await readFile(join(this.dir, hash));
    } catch {
      return null;
    }
  }

  /** Drops bases no file refers to any more. */
  async prune(keep: Set<string>): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    await Promise.all(names.filter((n) => !keep.has(n)).map((n) => unlink(join(this.dir, n)).catch(() => undefined)));
  }
}
