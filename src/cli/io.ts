/**
 * What one run of `cns` reads and writes: its streams, environment, working folder, and the
 * stop request of the long-running commands. `runCli` takes it as an argument, so a run can
 * happen inside another process (the tests) with nothing read from or left in `process`.
 */
export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  stdin: CliInput;
  env: Record<string, string | undefined>;
  /** The folder relative paths of arguments and settings are resolved against. */
  cwd: string;
  /**
   * Calls `handler` once when the user asks a long-running command (`serve`, `sync --watch`)
   * to stop (SIGINT or SIGTERM for the executable); answers a function that stops listening.
   */
  onStop(handler: (signal: string) => void): () => void;
}

export type CliOutput = NodeJS.WritableStream & { isTTY?: boolean };
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };

/** The executable's own process: its streams and environment, its signals. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    onStop(handler) {
      // Registered only while a command waits for it: a short command keeps Node's default Ctrl-C.
      const on = (signal: NodeJS.Signals) => {
        off();
        handler(signal);
      };
      const off = () => {
        process.off('SIGINT', on);
        process.off('SIGTERM', on);
      };
      process.once('SIGINT', on);
      process.once('SIGTERM', on);
      return off;
    },
  };
}
