import { lstat, readlink } from 'node:fs/promises';
import { SANDBOX_ENV, SANDBOX_WORKDIR } from './sandboxEnv.ts';

/**
 * What of the host a sandbox sees, found once at start-up: /usr read-only, the top-level
 * /bin /lib /lib64 /sbin as the symlinks they are on a merged-/usr system (or read-only binds
 * where they are real folders), and of /etc only what programs need to start: the dynamic
 * linker's cache and /etc/alternatives (awk, and others, are symlinks through it). No
 * /etc/passwd, /etc/shadow, /etc/hosts or /etc/resolv.conf; no /root, /home, /var, /srv.
 */
export interface HostLayout {
  args: string[];
}

const TOP_LEVEL = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const ETC = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/localtime'];

export async function hostLayout(): Promise<HostLayout> {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const path of TOP_LEVEL) {
    const st = await lstat(path).catch(() => null);
    if (!st) continue;
    if (st.isSymbolicLink()) args.push('--symlink', await readlink(path), path);
    else if (st.isDirectory()) args.push('--ro-bind', path, path);
  }
  for (const path of ETC) {
    // ro-bind-try: skipped when missing on this host (or a dangling /etc/localtime).
    args.push('--ro-bind-try', path, path);
  }
  return { args };
}

/**
 * bwrap's arguments for one run. Every namespace is unshared (net: only `lo`, no route out; pid:
 * the command sees only its own processes; ipc, uts, cgroup, user), the command cannot make
 * further user namespaces, dies with the service, gets a new session (no TIOCSTI into a terminal),
 * a fresh /proc and a minimal /dev, a private size-capped /tmp, and the working folder at /work.
 */
export function bwrapArgs(layout: HostLayout, run: { workDir: string; readOnly: boolean; tmpBytes: number; command: string }): string[] {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    '--clearenv',
  ];
  for (const [k, v] of Object.entries(SANDBOX_ENV)) args.push('--setenv', k, v);
  args.push(...layout.args);
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--size', String(run.tmpBytes), '--tmpfs', '/tmp');
  args.push(run.readOnly ? '--ro-bind' : '--bind', run.workDir, SANDBOX_WORKDIR);
  args.push('--chdir', SANDBOX_WORKDIR);
  args.push('/bin/sh', '-c', run.command);
  return args;
}
