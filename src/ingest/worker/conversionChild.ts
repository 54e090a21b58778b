import { convert } from '../converters/index.ts';
import { sendableError, type FromChild, type ToChild } from './protocol.ts';

/**
 * Body of a conversion child process (see conversionPool.ts): converts the jobs it is sent over
 * IPC, one at a time, and reports progress, the output or the error. It exits when the pool
 * disconnects; an error thrown outside a conversion is reported for the running job, then the
 * process exits, so that the pool replaces it.
 */
const send = (m: FromChild) => process.send!(m);

process.on('message', (m: ToChild) => {
  if (m.type !== 'convert') return;
  convert(m.input, (progress) => send({ type: 'progress', progress })).then(
    (output) => send({ type: 'done', output, rss: process.memoryUsage.rss() }),
    (err: unknown) => send({ type: 'failed', error: sendableError(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.on('uncaughtException', (err) => {
  if (process.connected) process.send!({ type: 'failed', error: sendableError(err), fatal: true } satisfies FromChild, () => process.exit(70));
  else process.exit(70);
});
send({ type: 'ready' });
