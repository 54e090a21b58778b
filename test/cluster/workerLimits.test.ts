import test from 'ava';
import { startWorkers } from './workersHarness.ts';

test('a rate limit holds across workers: tokens taken on one worker are spent on the other too', async (t) => {
  const w = await startWorkers(2, { CNS_RATE_LIMIT_MAX: '20', CNS_RATE_LIMIT_WINDOW_MS: '600000' });
  t.teardown(() => w.stop());
  const token = await w.token();
  const [a, b] = [await w.connectionTo('w1'), await w.connectionTo('w2')];
  t.teardown(() => [a, b].forEach((x) => x.destroy()));
  // The sign-in and set-up above took a few tokens of this caller too; spend the rest on w1.
  let allowedOnA = 0;
  for (let i = 0; i < 25; i++) if ((await w.api('GET', '/profile', { token, agent: a })).status !== 429) allowedOnA++;
  t.true(allowedOnA <= 20, `w1 allowed ${allowedOnA}`);
  // w2 hears of them within moments: the same caller is refused there as well.
  let allowedOnB = 0;
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await w.api('GET', '/profile', { token, agent: b });
    if (res.status === 429) {
      t.truthy(res.headers['retry-after']);
      break;
    }
    allowedOnB++;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.true(allowedOnB <= 3, `w2 allowed ${allowedOnB} more after w1 spent the bucket (alone it would allow 20)`);
});
