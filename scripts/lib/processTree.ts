import { readdirSync, readFileSync } from 'node:fs';

/**
 * A process and all its descendants, read from /proc (Linux): the whole of a `cns serve`
 * (the primary and its workers, and anything they run).
 */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = statFields(Number(entry))?.[1];
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** The fields of /proc/<pid>/stat after the command name (state first, then ppid, …); null once the process is gone. */
function statFields(pid: number): number[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
    return text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map((f) => Number(f));
  } catch {
    return null;
  }
}

/** Resident memory of one process in bytes (VmRSS), 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process's command name (/proc/<pid>/comm), '' once it is gone. */
export function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** CPU time (user + system) of each process of the tree in clock ticks (100 per second on Linux). */
export function cpuTicksByProcess(root: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of processTree(root)) {
    const f = statFields(pid);
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    if (f) out.set(pid, (f[11] ?? 0) + (f[12] ?? 0));
  }
  return out;
}

/** CPU time of the whole tree in clock ticks. */
export function cpuTicks(root: number): number {
  let ticks = 0;
  for (const t of cpuTicksByProcess(root).values()) ticks += t;
  return ticks;
}

/**
 * Waits until the tree uses under `maxShare` of one core over a 1 s window (background work a
 * measurement left, such as search indexing after writes, has finished), or until the deadline.
 * Answers whether it got idle.
 */
export async function waitIdle(root: number, deadlineMs = 60_000, maxShare = 0.05): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  let before = cpuTicks(root);
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuTicks(root);
    if (now - before <= maxShare * 100) return true;
    before = now;
  }
  return false;
}
