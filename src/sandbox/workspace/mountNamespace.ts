import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { findExecutable } from '../runtime/findExecutable.ts';

/**
 * A mount namespace of the service's own, holding the workspace pool's mounts (tmpfs, overlays)
 * so that they go with the service however it ends. The namespace is held by one small process
 * (`unshare --mount` then `cat` on a pipe from us): when this process ends, even by `kill -9`,
 * the pipe closes, the holder exits, and the kernel unmounts everything in the namespace and
 * frees its tmpfs memory. Nothing is ever mounted in the host's namespace.
 *
 * Paths inside it are reached in two ways. Programs that mount, copy or run commands there
 * enter it (`enter` + the program: nsenter). This process reaches the same files through the
 * holder's root, `/proc/<pid>/root<path>` (the "view" of `path`), which the kernel resolves in
 * the holder's namespace; a program inside the namespace resolves that view to the same place,
 * so the pool passes views everywhere and only the sandbox runtime, whose unprivileged user
 * cannot follow another process's root link, turns a view back into the plain path (`inside`).
 */
export class MountNamespace {
  private constructor(
    private readonly holder: ChildProcessWithoutNullStreams,
    readonly pid: number,
    private readonly nsenter: string,
  ) {}

  /** Makes the namespace; throws with the reason when this host does not allow it (not root, no unshare). */
  static async start(): Promise<MountNamespace> {
    const unshare = await findExecutable('unshare');
    const nsenter = await findExecutable('nsenter');
    if (!unshare || !nsenter) throw new Error('unshare and nsenter (util-linux) are needed');
    // Own process group: a Ctrl-C for the service does not end the holder before the service has unmounted.
    const holder = spawn(unshare, ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', 'echo ready && exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
    });
    await new Promise<void>((resolve, reject) => {
      let said = '';
      holder.stderr.on('data', (c: Buffer) => (said += c.toString()));
      holder.stdout.once('data', () => resolve());
      holder.once('error', reject);
      holder.once('exit', (code) => reject(new Error(`unshare --mount failed (${code}): ${said.trim().split('\n')[0] ?? ''}`)));
    });
    holder.stdin.on('error', () => undefined);
    // The holder never keeps the service alive: it goes when the service does.
    for (const h of [holder, holder.stdin, holder.stdout, holder.stderr] as unknown as { unref(): void }[]) h.unref();
    return new MountNamespace(holder, holder.pid!, nsenter);
  }

  /** How this process reaches `path` of the namespace. */
  view(path: string): string {
    return `/proc/${this.pid}/root${path}`;
  }

  /** The program and arguments that run a program inside the namespace (put them before it). */
  get enter(): string[] {
    return enterArgs(this.nsenter, this.pid);
  }

  /** Ends the holder: the namespace goes, and every mount still in it. */
  close(): void {
    this.holder.stdin.end();
  }
}

/** The path a namespace view names, and whose namespace (null: a plain path of this process's namespace). */
export function inside(path: string): { pid: number; path: string } | null {
  const m = /^\/proc\/(\d+)\/root(\/.*)?$/.exec(path);
  return m ? { pid: Number(m[1]), path: m[2] ?? '/' } : null;
}

/** nsenter's arguments entering the mount namespace of `pid`. */
export function enterArgs(nsenter: string, pid: number): string[] {
  return [nsenter, `--mount=/proc/${pid}/ns/mnt`, '--'];
}
