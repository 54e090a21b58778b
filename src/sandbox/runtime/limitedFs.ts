import type { CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';

type ReadOptions = Parameters<IFileSystem['readFile']>[1];
type WriteOptions = Parameters<IFileSystem['writeFile']>[2];

/** Bytes a run may still write, shared by every file system of the run. */
export interface WriteBudget {
  used: number;
  readonly max: number;
}

/** An fs error as Node raises them (`code`, a message that starts with it). */
function fsError(code: string, message: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${message}, '${path}'`), { code, path });
}

/**
 * Wraps a just-bash file system: read-only refuses every change with EROFS, and every byte
 * written (files written, appended, copied) is counted against the run's budget, past which
 * writes fail with ENOSPC. Reads pass through untouched. Sinks (/dev/null) take writes and keep nothing.
 */
export class LimitedFs implements IFileSystem {
  constructor(
    private readonly inner: IFileSystem,
    private readonly options: {
      readOnly: boolean;
      budget: WriteBudget;
      /** Where this file system is mounted, for error messages. */
      mountPoint?: string;
      /** Files that swallow what is written to them (just-bash only special-cases `2>/dev/null`). */
      sinks?: readonly string[];
    },
  ) {}

  /** The path as the command sees it (the inner file system gets paths relative to its mount). */
  private shown(path: string): string {
    const mount = this.options.mountPoint;
    return mount ? `${mount}${path === '/' ? '' : path}` : path;
  }

  private writable(path: string): void {
    if (this.options.readOnly) throw fsError('EROFS', 'read-only file system', this.shown(path));
  }

  private charge(path: string, bytes: number): void {
    this.writable(path);
    const { budget } = this.options;
    if (budget.used + bytes > budget.max) {
      throw fsError('ENOSPC', `no space left on device (the run may write ${budget.max} bytes)`, this.shown(path));
    }
    budget.used += bytes;
  }

  /** Bytes of a file, or of every file under a folder (what a copy writes). */
  private async sizeOf(path: string): Promise<number> {
    const st = await this.inner.lstat(path);
    if (!st.isDirectory) return st.isFile ? st.size : 0;
    let total = 0;
    for (const name of await this.inner.readdir(path)) total += await this.sizeOf(`${path.replace(/\/$/, '')}/${name}`);
    return total;
  }

  readFile(path: string, options?: ReadOptions): Promise<string> {
    return this.inner.readFile(path, options);
  }

  readFileBytes(path: string): ReturnType<NonNullable<IFileSystem['readFileBytes']>> {
    // Every built-in just-bash file system has it (only third-party ones may lack it).
    return this.inner.readFileBytes!(path);
  }

  readFileBuffer(path: string): Promise<Uint8Array> {
    return this.inner.readFileBuffer(path);
  }

  async writeFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    if (this.options.sinks?.includes(path)) return;
    this.charge(path, contentBytes(content, options));
    return this.inner.writeFile(path, content, options);
  }

  async appendFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    if (this.options.sinks?.includes(path)) return;
    this.charge(path, contentBytes(content, options));
    return this.inner.appendFile(path, content, options);
  }

  exists(path: string): Promise<boolean> {
    return this.inner.exists(path);
  }

  stat(path: string): Promise<FsStat> {
    return this.inner.stat(path);
  }

  lstat(path: string): Promise<FsStat> {
    return this.inner.lstat(path);
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    this.writable(path);
    return this.inner.mkdir(path, options);
  }

  readdir(path: string): Promise<string[]> {
    return this.inner.readdir(path);
  }

  readdirWithFileTypes(path: string): ReturnType<NonNullable<IFileSystem['readdirWithFileTypes']>> {
    return this.inner.readdirWithFileTypes!(path);
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    this.writable(path);
    return this.inner.rm(path, options);
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    this.writable(dest);
    this.charge(dest, await this.sizeOf(src));
    return this.inner.cp(src, dest, options);
  }

  async mv(src: string, dest: string): Promise<void> {
    this.writable(src);
    return this.inner.mv(src, dest);
  }

  resolvePath(base: string, path: string): string {
    return this.inner.resolvePath(base, path);
  }

  getAllPaths(): string[] {
    return this.inner.getAllPaths();
  }

  async chmod(path: string, mode: number): Promise<void> {
    this.writable(path);
    return this.inner.chmod(path, mode);
  }

  async symlink(target: string, linkPath: string): Promise<void> {
    this.writable(linkPath);
    return this.inner.symlink(target, linkPath);
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    this.writable(newPath);
    return this.inner.link(existingPath, newPath);
  }

  readlink(path: string): Promise<string> {
    return this.inner.readlink(path);
  }

  realpath(path: string): Promise<string> {
    return this.inner.realpath(path);
  }

  async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    this.writable(path);
    return this.inner.utimes(path, atime, mtime);
  }
}

function contentBytes(content: FileContent, options?: WriteOptions): number {
  if (typeof content !== 'string') return content.byteLength;
  const encoding = typeof options === 'string' ? options : options?.encoding;
  return Buffer.byteLength(content, encoding ?? 'utf8');
}
