/** The entry point of a worker process (forked by primary.ts). */
import { runWorker } from './worker.ts';

runWorker().catch((err: unknown) => {
  process.send?.({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
});
