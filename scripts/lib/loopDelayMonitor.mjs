// Preloaded into a bench's server process (`node --import=<this file> bin/cns.js serve …`): samples
// the process's event-loop delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution) and, on
// SIGUSR2, writes what it saw since the previous SIGUSR2 to $BENCH_LOOP_DELAY_DIR/loop-<pid>.json
// (then starts afresh). Plain JavaScript: it runs before bin/cns.js registers tsx. The main
// thread only, and only when the directory is given (processes the server starts inherit the
// environment, not the --import).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.BENCH_LOOP_DELAY_DIR;
if (dir && isMainThread) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let seq = 0;
  const file = join(dir, `loop-${process.pid}.json`);
  const ms = (ns) => (Number.isFinite(ns) ? ns / 1e6 : 0);
  process.on('SIGUSR2', () => {
    seq++;
    const stats = { seq, count: histogram.count, p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean) };
    histogram.reset();
    writeFileSync(`${file}.tmp`, JSON.stringify(stats));
    renameSync(`${file}.tmp`, file);
  });
}
