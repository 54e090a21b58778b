import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CNS_BIN = fileURLToPath(new URL('../../bin/cns.js', import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/**
 * Runs `cns serve` as a child process, as a user would, with a clean environment. `o.prefix`: a
 * command that runs it (`ip netns exec <name>`: test/helpers/netns.ts; it execs, so `child` is
 * still the server's process).
 */
export function spawnServe(args: string[], env: Record<string, string> = {}, o: { prefix?: string[] } = {}): ServeProcess {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CNS_') && k !== 'PORT'));
  const [command, ...commandArgs] = [...(o.prefix ?? []), process.execPath, CNS_BIN, 'serve', ...args];
  const child = spawn(command!, commandArgs, {
    // One process unless the test asks for workers (--workers or CNS_WORKERS): 'auto', one per core,
    // cost each start a process per core for tests that are not about workers (test/cluster is).
    env: { ...clean, CNS_LOG_LEVEL: 'warn', CNS_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = out.match(pattern);
        if (m) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${pattern}; output so far:\n${out}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  return { child, output: () => out, waitFor, exited };
}
