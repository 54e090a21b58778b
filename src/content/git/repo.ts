import * as fs from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import { finishedPacksFs } from './finishedPacksFs.ts';
import type { Logger } from 'pino';
import { Lru } from '../lru.ts';
import { parseCommit, type CommitData } from './commitObject.ts';
import { fsyncDirs, readLooseObject, writeLooseObject, type ObjectType } from './objects.ts';
import { PackFiles, type PackBuilder, type PackedLocation } from './packWriter.ts';
import { casMainRef, MAIN_REF, readMainRef, RefUpdate, type CasOutcome } from './refs.ts';
import type { TimeSlice } from '../timeSlice.ts';

/** Pack locations remembered per repository (about 200 bytes each). */
const MAX_RECENT = 10_000;

export interface TreeEntryRaw {
  mode: string;
  name: string;
  oid: string;
}

/**
 * One bare repository. Writes are our own (sha1 + zlib + temp file + rename: several times
 * faster than isomorphic-git's writers and crash-safe); reads try the loose object first and
 * fall back to isomorphic-git for packed objects, with one long-lived `cache` object (its pack
 * indexes) that is dropped after a repack.
 */
export class Repo {
  readonly gitdir: string;
  private cache: object = {};
  /** Objects of the packs this process wrote since the last repack: read without isomorphic-git. */
  private recent = new Map<string, PackedLocation>();
  private readonly knownDirs = new Set<string>();
  private ready = false;
  /** Folders with renamed-in objects not yet fsynced (only tracked when fsync is on). */
  private readonly dirtyDirs: Set<string> | null;

  constructor(
    gitdir: string,
    private readonly fsync: boolean,
  ) {
    this.gitdir = gitdir;
    this.dirtyDirs = fsync ? new Set() : null;
  }

  /** Whether writes are fsynced (power-loss durability). */
  get durable(): boolean {
    return this.fsync;
  }

  exists(): boolean {
    return this.ready || fs.existsSync(join(this.gitdir, 'HEAD'));
  }

  /** Creates the bare repository (branch main) if missing; built in a temp folder then renamed. */
  ensure(): void {
    if (this.ready) return;
    if (!fs.existsSync(join(this.gitdir, 'HEAD'))) {
      const parent = join(this.gitdir, '..');
      fs.mkdirSync(parent, { recursive: true });
      const tmp = fs.mkdtempSync(join(parent, '.init-'));
      for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) {
        fs.mkdirSync(join(tmp, d), { recursive: true });
      }
      fs.writeFileSync(join(tmp, 'HEAD'), 'ref: refs/heads/main\n');
      fs.writeFileSync(
        join(tmp, 'config'),
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n[receive]\n\tdenyNonFastForwards = true\n',
      );
      fs.writeFileSync(join(tmp, 'description'), 'cns content repository\n');
      try {
        fs.renameSync(tmp, this.gitdir);
      } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        if (!fs.existsSync(join(this.gitdir, 'HEAD'))) throw e;
      }
    }
    fs.mkdirSync(join(this.gitdir, 'objects', 'pack'), { recursive: true });
    this.ready = true;
  }

  writeObject(type: ObjectType, content: Buffer): string {
    this.ensure();
    return writeLooseObject(this.gitdir, type, content, this.fsync, this.knownDirs, this.dirtyDirs);
  }

  writeBlob(bytes: Buffer): string {
    return this.writeObject('blob', bytes);
  }

  /** Writes a batch's objects as one pack (into `files` when opened ahead) and remembers where each landed. */
  writePack(pack: PackBuilder, files?: PackFiles): void {
    this.ensure();
    for (const [oid, loc] of pack.write(this.gitdir, this.fsync, files)) this.recent.set(oid, loc);
    // Bounded: the oldest locations are dropped (those objects stay readable through the packs).
    for (const oid of this.recent.keys()) {
      if (this.recent.size <= MAX_RECENT) break;
      this.recent.delete(oid);
    }
  }

  /** writePack() for very large packs, yielding to the event loop while it writes. */
  async writePackSliced(pack: PackBuilder, slice: TimeSlice): Promise<void> {
    this.ensure();
    // Only the newest locations are kept (the pack's idx finds the rest): no 100,000-entry map to trim.
    const located = [...(await pack.writeSliced(this.gitdir, this.fsync, slice))].slice(-MAX_RECENT);
    for (const [oid, loc] of located) {
      await slice.tick();
      this.recent.set(oid, loc);
    }
    for (const oid of this.recent.keys()) {
      if (this.recent.size <= MAX_RECENT) break;
      await slice.tick();
      this.recent.delete(oid);
    }
  }

  /** Makes renames of new objects durable (no-op unless fsync is on). */
  syncObjectDirs(): void {
    if (!this.dirtyDirs || this.dirtyDirs.size === 0) return;
    fsyncDirs(this.dirtyDirs);
    this.dirtyDirs.clear();
  }

  async readObject(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    const loc = this.recent.get(oid);
    if (loc) {
      try {
        return { type: loc.type, content: readPackedAt(loc) };
      } catch {
        this.recent.delete(oid); // repacked by someone else: read it the general way
      }
    }
    const loose = readLooseObject(this.gitdir, oid);
    if (loose) return loose;
    try {
      return await this.readPacked(oid);
    } catch (e) {
      // A concurrent repack may have replaced the packs this cache knows: retry once with a fresh one.
      this.dropCache();
      const again = readLooseObject(this.gitdir, oid);
      if (again) return again;
      try {
        return await this.readPacked(oid);
      } catch {
        throw e;
      }
    }
  }

  async readBlob(oid: string): Promise<Buffer> {
    return (await this.readObject(oid)).content;
  }

  async readCommit(oid: string): Promise<CommitData> {
    const o = await this.readObject(oid);
    if (o.type !== 'commit') throw new Error(`${oid} is not a commit`);
    return parseCommit(o.content);
  }

  async readTree(oid: string): Promise<TreeEntryRaw[]> {
    const o = await this.readObject(oid);
    if (o.type !== 'tree') throw new Error(`${oid} is not a tree`);
    return parseTree(o.content);
  }

  readMain(): string | null {
    return this.exists() ? readMainRef(this.gitdir) : null;
  }

  casMain(expected: string | null, next: string): CasOutcome {
    this.ensure();
    return casMainRef(this.gitdir, expected, next, this.fsync);
  }

  /** The first step of casMain (see RefUpdate): the lock taken and checked, main not moved yet. */
  prepareMain(expected: string | null, next: string): RefUpdate | 'moved' | 'locked' {
    this.ensure();
    return RefUpdate.prepare(this.gitdir, MAIN_REF, expected, next, this.fsync);
  }

  /** Opens the temporary files of a pack ahead of the batch that writes it. */
  openPackFiles(): PackFiles {
    this.ensure();
    return new PackFiles(this.gitdir);
  }

  /** Forgets everything about the files on disk (the repository was deleted). */
  forgetDisk(): void {
    this.ready = false;
    this.dropCache();
  }

  /** Forgets pack locations and pack indexes (after a repack replaced the packs). */
  dropCache(): void {
    this.cache = {};
    this.recent = new Map();
    this.knownDirs.clear();
  }

  private async readPacked(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    const r = await git.readObject({ fs: finishedPacksFs, gitdir: this.gitdir, oid, cache: this.cache, format: 'content' });
    const bytes = r.object as Uint8Array;
    return { type: r.type as ObjectType, content: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }
}

function readPackedAt(loc: PackedLocation): Buffer {
  const fd = fs.openSync(loc.pack, 'r');
  try {
    const buf = Buffer.alloc(loc.dataLength);
    fs.readSync(fd, buf, 0, loc.dataLength, loc.dataOffset);
    return inflateSync(buf);
  } finally {
    fs.closeSync(fd);
  }
}

export function parseTree(buf: Buffer): TreeEntryRaw[] {
  const out: TreeEntryRaw[] = [];
  let i = 0;
  while (i < buf.length) {
    const sp = buf.indexOf(0x20, i);
    const nul = buf.indexOf(0, sp);
    const mode = buf.toString('latin1', i, sp);
    const name = buf.toString('utf8', sp + 1, nul);
    const oid = buf.toString('hex', nul + 1, nul + 21);
    out.push({ mode: mode === '40000' ? '40000' : mode, name, oid });
    i = nul + 21;
  }
  return out;
}

/** Repositories by project id; the LRU bounds how many pack caches stay in memory. */
export class RepoRegistry {
  private readonly lru: Lru<string, Repo>;

  constructor(
    readonly dataDir: string,
    private readonly options: { fsync: boolean; maxCached: number; logger?: Logger },
  ) {
    this.lru = new Lru<string, Repo>(options.maxCached);
  }

  get(projectId: string): Repo {
    let r = this.lru.get(projectId);
    if (!r) {
      r = new Repo(this.pathOf(projectId), this.options.fsync);
      this.lru.set(projectId, r);
    }
    return r;
  }

  pathOf(projectId: string): string {
    return join(this.dataDir, `${projectId}.git`);
  }

  /** The project's repository if this process holds it (never creates one). */
  cached(projectId: string): Repo | undefined {
    return this.lru.peek(projectId);
  }

  forget(projectId: string): void {
    this.lru.delete(projectId);
  }
}
