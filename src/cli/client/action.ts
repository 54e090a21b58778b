import type { CliIo } from '../io.ts';

/** A command's action with this run's io before commander's arguments (the run's, never the process's). */
export function withIo<A extends unknown[]>(io: CliIo, fn: (io: CliIo, ...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args: A) => fn(io, ...args);
}
