import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `cns sync` remembers of one file: the version both sides had when they last agreed. */
export interface FileState {
  nodeId: string;
  version: number;
  /** Git blob id of the remote content at `version`. */
  remoteHash: string;
  /** Git blob id of the local bytes at that moment (differs from remoteHash when the server normalized JSON). */
  localHash: string;
  size: number;
  mtimeMs: number;
}

/** The sync this folder is bound to (DIR/.cns/config.json); the key is kept apart in DIR/.cns/key (0600). */
export interface FolderConfig {
  version: 1;
  server: string;
  projectId: string;
  syncId: string;
  scopePath: string;
  /** The sync's name (absent in folders bound before names were kept here). */
  name?: string;
}

export interface SyncState {
  /** Project commit number up to which remote changes are applied here. */
  cursor: number;
  /** By path relative to the folder, `/`-separated. */
  files: Record<string, FileState>;
}

export const CNS_DIR = '.cns';

/** The git blob id of `bytes`: equal to the server's content hash for the same bytes. */
export function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Files under DIR/.cns/: written atomically (temp + rename) so that a crash never leaves half a state. */
export class FolderStore {
  readonly dir: string;

  constructor(readonly root: string) {
    this.dir = join(root, CNS_DIR);
  }

  get trashDir(): string {
    return join(this.dir, 'trash');
  }

  get baseDir(): string {
    return join(this.dir, 'base');
  }

  exists(): boolean {
    return existsSync(join(this.dir, 'config.json'));
  }

  /**
   * Claims the folder for this process (DIR/.cns/lock holds its pid): two syncs of one folder at
   * once would overwrite each other's state. A lock whose process is gone is taken over, and so
   * is one this process left behind, unless a run in this same process still holds it. Answers
   * the pid of the live holder instead when there is one, else a release function.
   */
  lock(): (() => void) | number {
    const file = join(this.dir, 'lock');
    if (heldHere.has(file)) return process.pid;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
        heldHere.add(file);
        const release = () => {
          process.off('exit', release);
          heldHere.delete(file);
          try {
            if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
          } catch {
            /* already gone */
          }
        };
        process.once('exit', release);
        return release;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = Number(readFileSync(file, 'utf8'));
        if (holder && holder !== process.pid && alive(holder)) return holder;
        unlinkSync(file);
      }
    }
    throw new Error(`cannot lock ${this.dir}`);
  }

  readConfig(): FolderConfig {
    return JSON.parse(readFileSync(join(this.dir, 'config.json'), 'utf8')) as FolderConfig;
  }

  readKey(): string {
    return readFileSync(join(this.dir, 'key'), 'utf8').trim();
  }

  init(config: FolderConfig, key: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.atomicWrite('key', key + '\n', 0o600);
    this.atomicWrite('config.json', JSON.stringify(config, null, 2) + '\n', 0o600);
    this.saveState({ cursor: 0, files: {} });
  }

  readState(): SyncState {
    try {
      const s = JSON.parse(readFileSync(join(this.dir, 'state.json'), 'utf8')) as SyncState;
      return { cursor: s.cursor ?? 0, files: s.files ?? {} };
    } catch {
      return { cursor: 0, files: {} };
    }
  }

  saveState(state: SyncState): void {
    this.atomicWrite('state.json', JSON.stringify(state), 0o600);
  }

  private atomicWrite(name: string, text: string, mode: number): void {
    const target = join(this.dir, name);
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode });
    chmodSync(tmp, mode);
    renameSync(tmp, target);
  }
}

/** Lock files held by runs of this process (`runCli` may run several syncs in one process). */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
