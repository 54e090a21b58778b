import { access, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';

/**
 * Control groups holding the memory (RAM + swap) and process-count limits of a sandbox run's
 * whole process tree, one run at a time per group. Groups are made at the hierarchy root: the
 * service itself may sit in a group that is not its own (a container, a session), and a child of
 * the root has no inherited limit to fight with. Making and removing a group costs a few ms on a
 * slow VM, so groups are pooled: one given back empty (no process, no shared memory charged to
 * it) is kept and handed to the next run, its limits rewritten when they differ. Names carry the
 * service's pid (and the pool's number), so groups left by a crashed service are recognised and removed without touching
 * those of another live service on the same host.
 */
export interface RunGroup {
  /** `cgroup.procs` files the launching shell writes its own pid into before it execs the sandbox. */
  readonly procsFiles: string[];
  /** SIGKILLs every process in the group, again until it is empty (or a 2 s deadline passes). */
  killAll(): Promise<void>;
  /** Whether the kernel's OOM killer killed a process of the group during this run (the memory limit was hit). */
  oomKilled(): Promise<boolean>;
  /** The run is over: the group is kept for another run when it is empty, removed otherwise. Never rejects. */
  release(): Promise<void>;
}

export interface GroupLimits {
  memoryBytes: number;
  maxProcesses: number;
}

export interface Cgroups {
  readonly version: 1 | 2;
  /** What is limited, for the runtime's description. */
  readonly description: string;
  acquire(limits: GroupLimits): Promise<RunGroup>;
  /** Removes the pooled (idle) groups, after the releases under way; groups of runs still going stay. */
  drain(): Promise<void>;
  /** Drains, and from now on removes every group given back. */
  close(): Promise<void>;
  /** Names of this service's groups that still exist (tests assert there are none left after `drain`). */
  leftovers(): Promise<string[]>;
}

export type CgroupsProbe = { cgroups: Cgroups; reason?: undefined } | { cgroups: null; reason: string };

export interface CgroupsOptions {
  /** Empty groups kept for reuse. Default 8. */
  maxIdle?: number;
  /** Groups made at start-up, so that the first runs find one. Default 2. */
  premade?: number;
  /** Told about a group that could not be removed. */
  onError?: (err: unknown) => void;
}

const PREFIX = 'cns-sbx-';
const V1_MEMORY = '/sys/fs/cgroup/memory';
const V1_PIDS = '/sys/fs/cgroup/pids';
const V2_ROOT = '/sys/fs/cgroup';
const KILL_DEADLINE_MS = 2000;
const POLL_MS = 10;
/** Shared memory (tmpfs pages) still charged to an empty group, past which it is not reused: the next run would start with less than its limit. */
const MAX_SHMEM_ON_REUSE = 1024 * 1024;

let pools = 0;

/** How one hierarchy (v1 memory + pids, or v2) lays out and limits a group. */
interface Hierarchy {
  readonly version: 1 | 2;
  readonly description: string;
  readonly roots: string[];
  dirs(name: string): string[];
  /** v1 memory.oom_control or v2 memory.events: both have an `oom_kill N` line. */
  oomFile(name: string): string;
  /** v2's cgroup.kill, which kills the whole group in one write. */
  killFile(name: string): string | null;
  statFile(name: string): string;
  /** Writes the limits of a group made just now (`previous` null) or reused with other limits. */
  writeLimits(name: string, limits: GroupLimits, previous: GroupLimits | null): Promise<void>;
}

/** Finds a cgroup hierarchy this process may create groups in: v1 memory+pids, else v2 with both controllers. */
export async function detectCgroups(options: CgroupsOptions = {}): Promise<CgroupsProbe> {
  const v1 = await probe(detectV1, options);
  if (v1.cgroups) return v1;
  const v2 = await probe(detectV2, options);
  if (v2.cgroups) return v2;
  return { cgroups: null, reason: `no writable cgroup hierarchy (v1: ${v1.reason}; v2: ${v2.reason})` };
}

async function probe(detect: () => Promise<Hierarchy>, options: CgroupsOptions): Promise<CgroupsProbe> {
  let pool: GroupPool | null = null;
  try {
    const hierarchy = await detect();
    await removeStale(hierarchy.roots);
    pool = new GroupPool(hierarchy, options);
    // Real groups with real limits, kept for the first runs: proves mkdir and the writes are allowed.
    const made = await Promise.all(Array.from({ length: Math.max(1, options.premade ?? 2) }, () => pool!.acquire({ memoryBytes: 64 * 1024 * 1024, maxProcesses: 16 })));
    await Promise.all(made.map((g) => g.release()));
    return { cgroups: pool };
  } catch (err) {
    await pool?.drain().catch(() => undefined);
    return { cgroups: null, reason: errorText(err) };
  }
}

async function detectV1(): Promise<Hierarchy> {
  await access(join(V1_MEMORY, 'memory.limit_in_bytes'), constants.W_OK);
  await access(join(V1_PIDS, 'cgroup.procs'), constants.W_OK);
  const swapAccounted = await exists(join(V1_MEMORY, 'memory.memsw.limit_in_bytes'));
  const memoryFiles = ['memory.limit_in_bytes', ...(swapAccounted ? ['memory.memsw.limit_in_bytes'] : [])];
  return {
    version: 1,
    description: `cgroups v1 (memory${swapAccounted ? ' + swap' : ', swap not accounted'}, pids)`,
    roots: [V1_MEMORY, V1_PIDS],
    dirs: (name) => [join(V1_MEMORY, name), join(V1_PIDS, name)],
    oomFile: (name) => join(V1_MEMORY, name, 'memory.oom_control'),
    killFile: () => null,
    statFile: (name) => join(V1_MEMORY, name, 'memory.stat'),
    async writeLimits(name, limits, previous) {
      if (limits.memoryBytes !== previous?.memoryBytes) {
        // memsw (RAM + swap) may never be below the RAM limit: raised first, lowered last.
        const order = previous && limits.memoryBytes > previous.memoryBytes ? [...memoryFiles].reverse() : memoryFiles;
        for (const file of order) await writeFile(join(V1_MEMORY, name, file), String(limits.memoryBytes));
      }
      if (limits.maxProcesses !== previous?.maxProcesses) await writeFile(join(V1_PIDS, name, 'pids.max'), String(limits.maxProcesses));
    },
  };
}

async function detectV2(): Promise<Hierarchy> {
  const controllers = (await readFile(join(V2_ROOT, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  for (const c of ['memory', 'pids']) if (!controllers.includes(c)) throw new Error(`controller ${c} not available`);
  const enabled = (await readFile(join(V2_ROOT, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
  if (!enabled.includes('memory') || !enabled.includes('pids')) {
    await writeFile(join(V2_ROOT, 'cgroup.subtree_control'), '+memory +pids');
  }
  return {
    version: 2,
    description: 'cgroups v2 (memory, swap off, pids)',
    roots: [V2_ROOT],
    dirs: (name) => [join(V2_ROOT, name)],
    oomFile: (name) => join(V2_ROOT, name, 'memory.events'),
    killFile: (name) => join(V2_ROOT, name, 'cgroup.kill'),
    statFile: (name) => join(V2_ROOT, name, 'memory.stat'),
    async writeLimits(name, limits, previous) {
      const dir = join(V2_ROOT, name);
      if (limits.memoryBytes !== previous?.memoryBytes) await writeFile(join(dir, 'memory.max'), String(limits.memoryBytes));
      if (!previous && (await exists(join(dir, 'memory.swap.max')))) await writeFile(join(dir, 'memory.swap.max'), '0');
      if (limits.maxProcesses !== previous?.maxProcesses) await writeFile(join(dir, 'pids.max'), String(limits.maxProcesses));
    },
  };
}

class GroupPool implements Cgroups {
  readonly version: 1 | 2;
  readonly description: string;
  private readonly idle: PooledGroup[] = [];
  /** Releases under way (drain waits for them). */
  private readonly pending = new Set<Promise<void>>();
  /** `cns-sbx-<pid>-<pool>-`: this pool's groups, told apart from those of other runtimes of the process. */
  private readonly prefix = `${PREFIX}${process.pid}-${++pools}-`;
  private sequence = 0;
  private closed = false;

  constructor(
    readonly hierarchy: Hierarchy,
    private readonly options: CgroupsOptions,
  ) {
    this.version = hierarchy.version;
    this.description = hierarchy.description;
  }

  async acquire(limits: GroupLimits): Promise<RunGroup> {
    const same = this.idle.findIndex((g) => g.limits.memoryBytes === limits.memoryBytes && g.limits.maxProcesses === limits.maxProcesses);
    const reused = this.idle.splice(same >= 0 ? same : this.idle.length - 1, 1)[0];
    if (reused) {
      try {
        await this.hierarchy.writeLimits(reused.name, limits, reused.limits);
        reused.limits = { ...limits };
        return reused;
      } catch {
        // A limit the kernel refuses for this group (memory it cannot reclaim below the new limit): a fresh group instead.
        await this.remove(reused);
      }
    }
    const group = new PooledGroup(this, `${this.prefix}${++this.sequence}`, { ...limits });
    const dirs = this.hierarchy.dirs(group.name);
    for (let i = 0; i < dirs.length; i++) {
      try {
        await mkdir(dirs[i]!);
      } catch (err) {
        for (const made of dirs.slice(0, i)) await rmdir(made).catch(() => undefined);
        throw err;
      }
    }
    try {
      await this.hierarchy.writeLimits(group.name, limits, null);
    } catch (err) {
      await this.remove(group);
      throw err;
    }
    return group;
  }

  /** Keeps an empty group for the next run (its OOM count so far is the next run's zero), removes any other. */
  giveBack(group: PooledGroup): Promise<void> {
    const done = (async () => {
      try {
        let empty = (await group.members()).length === 0;
        if (!empty) {
          await group.killAll();
          empty = (await group.members()).length === 0;
        }
        const keep = empty && !this.closed && this.idle.length < (this.options.maxIdle ?? 8) && (await this.shmemBytes(group)) <= MAX_SHMEM_ON_REUSE;
        if (!keep) return await this.remove(group);
        group.oomBase = await group.oomCount();
        this.idle.push(group);
      } catch (err) {
        await this.remove(group).catch(() => undefined);
        this.options.onError?.(err);
      }
    })();
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return done;
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    for (const group of this.idle.splice(0)) await this.remove(group).catch((err: unknown) => this.options.onError?.(err));
  }

  close(): Promise<void> {
    this.closed = true;
    return this.drain();
  }

  leftovers(): Promise<string[]> {
    return ownGroups(this.hierarchy.roots, this.prefix);
  }

  private async shmemBytes(group: PooledGroup): Promise<number> {
    const m = /^shmem (\d+)$/m.exec(await readFile(this.hierarchy.statFile(group.name), 'utf8'));
    return m ? Number(m[1]) : 0;
  }

  /** Kills what is left and removes the group's directories. */
  async remove(group: PooledGroup): Promise<void> {
    const deadline = Date.now() + KILL_DEADLINE_MS;
    for (const dir of this.hierarchy.dirs(group.name)) {
      for (;;) {
        try {
          await rmdir(dir);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          // EBUSY: processes still in it (a zombie not reaped yet, or something that escaped the kill).
          if (code !== 'EBUSY' || Date.now() > deadline) throw err;
          await group.killAll();
          await delay(POLL_MS);
        }
      }
    }
  }
}

/** The same group in one or more hierarchies (v1 has one directory per controller). */
class PooledGroup implements RunGroup {
  readonly procsFiles: string[];
  /** OOM kills counted before this run (the counter cannot be reset). */
  oomBase = 0;

  constructor(
    private readonly pool: GroupPool,
    readonly name: string,
    public limits: GroupLimits,
  ) {
    this.procsFiles = pool.hierarchy.dirs(name).map((d) => join(d, 'cgroup.procs'));
  }

  async killAll(): Promise<void> {
    const killFile = this.pool.hierarchy.killFile(this.name);
    if (killFile && (await exists(killFile))) await writeFile(killFile, '1').catch(() => undefined);
    const deadline = Date.now() + KILL_DEADLINE_MS;
    for (;;) {
      const pids = await this.members();
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (Date.now() > deadline) return;
      await delay(POLL_MS);
    }
  }

  async oomKilled(): Promise<boolean> {
    return (await this.oomCount()) > this.oomBase;
  }

  async oomCount(): Promise<number> {
    try {
      const m = /^oom_kill (\d+)$/m.exec(await readFile(this.pool.hierarchy.oomFile(this.name), 'utf8'));
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }

  release(): Promise<void> {
    return this.pool.giveBack(this);
  }

  async members(): Promise<number[]> {
    const pids = new Set<number>();
    for (const file of this.procsFiles) {
      try {
        for (const line of (await readFile(file, 'utf8')).split('\n')) if (line) pids.add(Number(line));
      } catch {
        // Group already removed.
      }
    }
    return [...pids];
  }
}

/** Removes groups of services that no longer run (their sandboxes died with them: --die-with-parent). */
async function removeStale(roots: string[]): Promise<void> {
  for (const root of roots) {
    for (const name of await readdir(root).catch(() => [] as string[])) {
      const m = /^cns-sbx-(\d+)(?:-\d+){1,2}$/.exec(name);
      if (!m || isAlive(Number(m[1]))) continue;
      await rmdir(join(root, name)).catch(() => undefined);
    }
  }
}

async function ownGroups(roots: string[], mine: string): Promise<string[]> {
  const found: string[] = [];
  for (const root of roots) {
    for (const name of await readdir(root).catch(() => [] as string[])) if (name.startsWith(mine)) found.push(join(root, name));
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
