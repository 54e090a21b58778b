import { rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ContentReads } from '../../content/contentReads.ts';
import { ValidationError } from '../../errors/contentErrors.ts';
import { normalizePath } from '../../content/paths.ts';
import type { Logger } from '../../logging/logger.ts';
import { exportPristine, makeCopyFolder, makeOverlayFolder, needsChown, removeFolder, removeTree, type Owner } from './materialize.ts';
import type { HostShell } from './hostShell.ts';
import { clearLeftoverPools, clearOwn, setUpPool, type PoolSetup, type Strategy } from './poolSetup.ts';
import { RunFolder, WorkspaceHandle, type Pristine } from './runFolder.ts';
import type { Workspace } from './workspace.ts';

const MiB = 1024 * 1024;

export interface WorkspacePoolOptions {
  /** Folder of the pool's folders (its own subfolders are cleared at start-up and removed at close; the root too when empty). */
  root: string;
  content: Pick<ContentReads, 'exportTree'>;
  logger?: Logger;
  /** `overlay` needs root and overlayfs; `auto` (default) uses it when it works, else copies. */
  strategy?: 'auto' | Strategy;
  /** Whether to mount tmpfs/overlays at all; default: when running as root. */
  mounts?: boolean;
  /** Disk cap of a folder when acquire does not give one. Default 1 GiB. */
  diskBytes?: number;
  /** Files and folders a command may create in a capped folder. Default 65,536. */
  maxNewEntries?: number;
  /**
   * Unchanged folders kept per checkout and disk cap. Default 16 for overlays (an idle one is two
   * mounts and an empty tmpfs: enough for a burst of 16 concurrent runs), 4 for copies.
   */
  maxIdlePerKey?: number;
  /** Unchanged folders kept in all. Default 64 for overlays, 16 for copies. */
  maxIdle?: number;
  /** Pristine checkouts kept. Default 16. */
  maxPristines?: number;
  /** Size of the tmpfs holding pristine checkouts (when mounting). Default 1 GiB. */
  pristineBytes?: number;
  /**
   * Several workers, at the box's start: the folder holding every worker's pool (`root` is one of
   * them), whose other pools' leftovers are cleared first. Absent: only `root` is cleared.
   */
  clearPoolsUnder?: string;
}

export interface AcquireOptions {
  /** Bytes the command may write into the folder (the endpoint's disk limit). */
  diskBytes?: number;
}

/**
 * Working folders for sandbox runs. Each (project, scope, commit, owner) has a pristine checkout,
 * exported once; folders are made from it (an overlay over it, or a copy of it) and handed out
 * one run at a time. A folder released unchanged goes back to the pool and is handed out again
 * as it is: the common run (`ls`, `grep`, a read-only command) costs no copy and no mount. A
 * changed one is unmounted and removed in the background. Checkouts of a commit older than the
 * newest one asked for are dropped once their folders are; counts of both are bounded.
 */
export class WorkspacePool {
  /** Resolves once leftovers of an earlier process are cleared and the strategy is known. */
  readonly ready: Promise<void>;
  private setup: PoolSetup | null = null;
  private readonly root: string;
  private readonly pristines = new Map<string, { promise: Promise<Pristine>; value?: Pristine }>();
  private readonly latest = new Map<string, string>();
  private readonly idle = new Map<string, RunFolder[]>();
  private readonly folders = new Set<RunFolder>();
  /** Folders and checkouts being made or removed (close and settled wait for them). */
  private readonly pending = new Set<Promise<unknown>>();
  private closing: Promise<void> | null = null;
  private seq = 0;

  constructor(private readonly o: WorkspacePoolOptions) {
    this.root = resolve(o.root);
    const cleared = o.clearPoolsUnder ? clearLeftoverPools(resolve(o.clearPoolsUnder), this.root) : Promise.resolve();
    this.ready = cleared
      .then(() =>
        setUpPool(this.root, {
          strategy: o.strategy ?? 'auto',
          mounts: o.mounts,
          pristineBytes: o.pristineBytes ?? 1024 * MiB,
        }),
      )
      .then((setup) => {
        this.setup = setup;
        o.logger?.info({ workspaces: { root: this.root, strategy: setup.strategy, diskCap: setup.diskCapNote } }, `sandbox workspaces: ${setup.strategy}`);
      });
    this.ready.catch(() => undefined);
  }

  /** `overlay` or `copy`, once ready. */
  get strategy(): Strategy | null {
    return this.setup?.strategy ?? null;
  }

  /** The mount namespace holding the pool's mounts, once ready (null: it mounts nothing). */
  get namespace(): PoolSetup['namespace'] {
    return this.setup?.namespace ?? null;
  }

  /** The pool's root as this process reaches it, once ready: a view into its mount namespace when it has one. */
  get reachableRoot(): string {
    return this.setup?.root ?? this.root;
  }

  /** The pool's programs run here, in its mount namespace (only once ready). */
  private get host(): HostShell {
    return this.setup!.host;
  }

  /** How a folder's size is capped here (or why it is not), once ready. */
  get diskCapNote(): string {
    return this.setup?.diskCapNote ?? 'the workspace pool is starting';
  }

  /**
   * A folder holding exactly the subtree `scope` of `commitId` (null: a project without commits,
   * an empty folder), writable by `owner` (null: by this process's user). NOT_FOUND when the
   * subtree is not there at that commit. Concurrent calls get distinct folders.
   */
  async acquire(projectId: string, scope: string, commitId: string | null, owner: Owner, options: AcquireOptions = {}): Promise<Workspace> {
    await this.ready;
    const setup = this.setup!;
    if (this.closing) throw new Error('the workspace pool is closed');
    const path = normalizePath(scope, 'scope');
    if (commitId !== null && (typeof commitId !== 'string' || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commitId))) {
      throw new ValidationError('commitId must be a full commit id or null', { field: 'commitId' });
    }
    if (owner !== null && !(isId(owner.uid) && isId(owner.gid))) throw new ValidationError('owner must be null or {uid, gid}', { field: 'owner' });
    if (needsChown(owner) && process.getuid?.() !== 0) throw new Error(`folders can be handed to uid ${owner.uid} only when running as root`);
    const capBytes = options.diskBytes ?? this.o.diskBytes ?? 1024 * MiB;
    if (!Number.isSafeInteger(capBytes) || capBytes <= 0) throw new ValidationError('diskBytes must be a positive integer', { field: 'diskBytes' });

    const group = JSON.stringify([projectId, path, owner?.uid ?? null, owner?.gid ?? null]);
    const key = JSON.stringify([projectId, path, commitId, owner?.uid ?? null, owner?.gid ?? null]);
    const idleKey = `${key}:${capBytes}`;
    this.markLatest(group, key);
    const reused = this.idle.get(idleKey)?.pop();
    if (reused) {
      reused.state = 'busy';
      reused.pristine.lastUsed = Date.now();
      return new WorkspaceHandle(reused, (f) => this.giveBack(f));
    }
    const pristine = await this.usePristine(key, { group, projectId, scope: path, commitId, owner });
    if (this.closing) {
      this.dropUser(pristine);
      throw new Error('the workspace pool is closed');
    }
    let folder: RunFolder;
    try {
      folder = await this.track(this.makeFolder(setup, pristine, idleKey, capBytes));
    } catch (e) {
      this.dropUser(pristine);
      throw e;
    }
    this.folders.add(folder);
    if (this.closing) {
      this.discard(folder);
      throw new Error('the workspace pool is closed');
    }
    return new WorkspaceHandle(folder, (f) => this.giveBack(f));
  }

  /** Waits until folders and checkouts being made or removed in the background are done. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Folders held right now: handed out, and unchanged ones waiting to be handed out again. */
  counts(): { busy: number; idle: number; pristines: number } {
    let busy = 0;
    let idle = 0;
    for (const f of this.folders) {
      if (f.state === 'busy') busy++;
      else if (f.state === 'idle') idle++;
    }
    return { busy, idle, pristines: this.pristines.size };
  }

  /** Unmounts and removes every folder and checkout (the root too when nothing else is in it); acquire fails after. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.ready.catch(() => undefined);
      const setup = this.setup;
      if (!setup) return;
      await this.settled();
      for (const f of [...this.folders]) this.discard(f);
      await this.settled();
      for (const slot of [...this.pristines.values()]) if (slot.value) this.removePristine(slot.value);
      await this.settled();
      try {
        await clearOwn(setup.host, setup.root);
        // The root goes too when nothing else lives there.
        await rmdir(setup.root).catch(() => undefined);
      } finally {
        setup.host.close();
        // Whatever could not be unmounted goes with the namespace.
        setup.namespace?.close();
      }
    })();
    return this.closing;
  }

  private async makeFolder(setup: PoolSetup, pristine: Pristine, idleKey: string, capBytes: number): Promise<RunFolder> {
    const base = join(setup.runsDir, `${Date.now().toString(36)}-${++this.seq}`);
    const inodes = this.o.maxNewEntries ?? 65_536;
    if (setup.strategy === 'overlay') {
      return RunFolder.overlay(await makeOverlayFolder(this.host, base, pristine.dir, capBytes, inodes, pristine.owner), pristine, idleKey);
    }
    const { layout, baseline } = await makeCopyFolder(this.host, base, pristine, { capBytes, inodes, owner: pristine.owner, tmpfs: setup.tmpfs, fineCtime: setup.fineCtime });
    return RunFolder.copy(layout, pristine, idleKey, baseline);
  }

  /** The checkout for `key`, exported once however many ask at the same time; counted as used by the caller. */
  private async usePristine(key: string, what: Omit<Pristine, 'key' | 'dir' | 'tree' | 'inTmpfs' | 'users' | 'lastUsed' | 'stale' | 'removed'>): Promise<Pristine> {
    for (;;) {
      let slot = this.pristines.get(key);
      if (!slot) {
        const promise = this.track(this.exportPristine(key, what));
        const made: { promise: Promise<Pristine>; value?: Pristine } = { promise };
        slot = made;
        this.pristines.set(key, made);
        promise.then(
          (p) => {
            made.value = p;
            this.trimPristines(p);
          },
          () => this.pristines.get(key) === made && this.pristines.delete(key),
        );
      }
      const p = await slot.promise;
      if (p.removed) continue;
      p.users++;
      p.stale = false;
      p.lastUsed = Date.now();
      return p;
    }
  }

  private async exportPristine(key: string, what: Omit<Pristine, 'key' | 'dir' | 'tree' | 'inTmpfs' | 'users' | 'lastUsed' | 'stale' | 'removed'>): Promise<Pristine> {
    const setup = this.setup!;
    const name = `${Date.now().toString(36)}-${++this.seq}`;
    const base = { ...what, key, users: 0, lastUsed: Date.now(), stale: false, removed: false };
    const dir = join(setup.pristineDir, name);
    try {
      return { ...base, dir, inTmpfs: setup.tmpfs, tree: await exportPristine(this.o.content, dir, what) };
    } catch (e) {
      await removeTree(this.host, dir);
      // Too big for the tmpfs of checkouts: this one goes to disk.
      if (!setup.pristineDiskDir || !/ENOSPC|No space left/i.test(String((e as Error).message))) throw e;
      const onDisk = join(setup.pristineDiskDir, name);
      try {
        return { ...base, dir: onDisk, inTmpfs: false, tree: await exportPristine(this.o.content, onDisk, what) };
      } catch (e2) {
        await removeTree(this.host, onDisk);
        throw e2;
      }
    }
  }

  /** The newest commit asked for in a group: older checkouts of the group are not wanted any more. */
  private markLatest(group: string, key: string): void {
    if (this.latest.get(group) === key) return;
    this.latest.set(group, key);
    for (const slot of this.pristines.values()) {
      const p = slot.value;
      if (p && p.group === group && p.key !== key) this.retire(p);
    }
  }

  /** Keeps at most maxPristines checkouts (and the tmpfs budget): the least recently used idle ones go. */
  private trimPristines(fresh: Pristine): void {
    const max = this.o.maxPristines ?? 16;
    const budget = (this.o.pristineBytes ?? 1024 * MiB) * 0.8;
    const live = () => [...this.pristines.values()].flatMap((s) => (s.value && !s.value.stale ? [s.value] : []));
    for (;;) {
      const all = live();
      const tmpfsBytes = all.reduce((n, p) => n + (p.inTmpfs ? p.tree.pageBytes : 0), 0);
      if (all.length <= max && tmpfsBytes <= budget) return;
      const victim = all.filter((p) => p !== fresh && p.users === this.idleOf(p).length).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!victim) return;
      this.retire(victim);
    }
  }

  private idleOf(p: Pristine): RunFolder[] {
    const out: RunFolder[] = [];
    for (const list of this.idle.values()) for (const f of list) if (f.pristine === p) out.push(f);
    return out;
  }

  /** Drops a checkout's idle folders; the checkout goes with its last folder. */
  private retire(p: Pristine): void {
    p.stale = true;
    for (const f of this.idleOf(p)) this.discard(f);
    if (p.users === 0) this.removePristine(p);
  }

  private async giveBack(folder: RunFolder): Promise<void> {
    if (folder.state !== 'busy') return;
    let keep = false;
    if (!this.closing && !folder.pristine.stale) keep = await folder.unchanged().catch(() => false);
    const list = this.idle.get(folder.idleKey) ?? [];
    if (!keep || this.closing || folder.pristine.stale || folder.state !== 'busy' || list.length >= (this.o.maxIdlePerKey ?? (this.setup?.strategy === 'overlay' ? 16 : 4))) {
      this.discard(folder);
      return;
    }
    folder.state = 'idle';
    folder.lastUsed = Date.now();
    list.push(folder);
    this.idle.set(folder.idleKey, list);
    this.trimIdle();
  }

  private trimIdle(): void {
    const max = this.o.maxIdle ?? (this.setup?.strategy === 'overlay' ? 64 : 16);
    const all = [...this.idle.values()].flat();
    if (all.length <= max) return;
    all.sort((a, b) => a.lastUsed - b.lastUsed);
    for (const f of all.slice(0, all.length - max)) this.discard(f);
  }

  /** Unmounts and removes a folder in the background; its checkout goes with it when no longer wanted. */
  private discard(folder: RunFolder): void {
    if (folder.state === 'gone') return;
    const list = this.idle.get(folder.idleKey);
    if (list) {
      const i = list.indexOf(folder);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.idle.delete(folder.idleKey);
    }
    folder.state = 'gone';
    void this.track(
      removeFolder(this.host, folder.layout)
        .catch((err: unknown) => this.o.logger?.warn({ err, dir: folder.layout.base }, 'sandbox workspace could not be removed'))
        .finally(() => {
          this.folders.delete(folder);
          this.dropUser(folder.pristine);
        }),
    );
  }

  private dropUser(p: Pristine): void {
    p.users--;
    if (p.users === 0 && (p.stale || this.closing)) this.removePristine(p);
  }

  private removePristine(p: Pristine): void {
    if (p.removed) return;
    p.removed = true;
    if (this.pristines.get(p.key)?.value === p) this.pristines.delete(p.key);
    if (this.latest.get(p.group) === p.key) this.latest.delete(p.group);
    void this.track(removeTree(this.host, p.dir).catch((err: unknown) => this.o.logger?.warn({ err, dir: p.dir }, 'sandbox checkout could not be removed')));
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const done = () => this.pending.delete(promise);
    promise.then(done, done);
    return promise;
  }
}

const isId = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
