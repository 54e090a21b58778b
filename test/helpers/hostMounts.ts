import { readFileSync } from 'node:fs';
import type { TestFn } from 'ava';

/** Folders the tests of this process gave sandbox workspaces (server sandbox folders, pool roots). */
const roots = new Set<string>();

/** Remembers a folder sandbox workspaces were made in, for `leavesNoHostMounts`. */
export function usesSandboxRoot(dir: string): void {
  roots.add(dir);
}

/** Mount points at or below `root` in this process's mount namespace (the host's). */
export function hostMountsUnder(root: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => (line.split(' ')[1] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === root || p.startsWith(`${root}/`));
}

/**
 * Fails the test file when any folder its servers and pools made workspaces in holds a mount in
 * the host's mount namespace at the end: the pool's mounts live in a namespace of their own and
 * go with it, so the suite leaves none behind whatever happens to its servers.
 */
export function leavesNoHostMounts<C>(test: TestFn<C>): void {
  test.after.always('no sandbox mount is left in the host', (t) => {
    t.deepEqual([...roots].flatMap(hostMountsUnder), []);
  });
}
