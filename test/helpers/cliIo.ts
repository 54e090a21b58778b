import { Readable, Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/io.ts';

export interface MemoryIo {
  io: CliIo;
  stdoutBytes(): Buffer;
  stderr(): string;
  /** What `cns serve` and `cns sync --watch` take for Ctrl-C. */
  stop(signal?: string): void;
}

/** A sink that keeps what is written, calling `onWrite` after each chunk. */
function collector(chunks: Buffer[], onWrite: () => void): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      onWrite();
      done();
    },
  });
}

/**
 * The io of one in-process `runCli` run: stdin from `input` (not a terminal), stdout and stderr
 * kept in memory, the given environment and working folder, and a stop request on demand.
 */
export function memoryIo(options: { input?: string | Buffer; env?: Record<string, string | undefined>; cwd?: string; onOutput?: () => void } = {}): MemoryIo {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const notify = options.onOutput ?? (() => undefined);
  const stoppers = new Set<(signal: string) => void>();
  const io: CliIo = {
    stdout: collector(out, notify),
    stderr: collector(err, notify),
    stdin: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)], { objectMode: false }),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    onStop(handler) {
      stoppers.add(handler);
      return () => stoppers.delete(handler);
    },
  };
  return {
    io,
    stdoutBytes: () => Buffer.concat(out),
    stderr: () => Buffer.concat(err).toString('utf8'),
    stop(signal = 'SIGTERM') {
      for (const h of [...stoppers]) {
        stoppers.delete(h);
        h(signal);
      }
    },
  };
}

/** The test runner's environment without its CNS_* settings (and PORT), as a user's shell would have it. */
export function cleanEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CNS_') && k !== 'PORT'));
}
