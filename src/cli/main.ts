import { processIo } from './io.ts';
import { runCli } from './runCli.ts';

// The `cns` executable: one run with this process's streams, environment and signals.

// A reader that stops early (`cns cat big.md | head`) is not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), processIo());
