import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError } from './errors.ts';

/** A lock older than this belongs to a process that died holding it. */
const STALE_MS = 30_000;

/**
 * Runs `fn` while holding `path` (created exclusively), so that concurrent `cns` processes do
 * one thing at a time: here, trading a single-use refresh token, which the server would
 * otherwise see reused and answer by revoking the whole sign-in.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      closeSync(openSync(path, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = (() => {
        try {
          return Date.now() - statSync(path).mtimeMs;
        } catch {
          return 0;
        }
      })();
      if (age > STALE_MS) rmSync(path, { force: true });
      else if (Date.now() > deadline) throw new CliError(`another cns process holds ${path}; remove it if none is running`);
      else await sleep(25 + Math.random() * 50);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}
