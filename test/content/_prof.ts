import { fixture, alice } from './helpers.ts';
const f = fixture({ repackEvery: 0 });
const s = f.store;
const P = 'bench';
await s.bulkWrite(P, alice, Array.from({ length: 1000 }, (_, i) => ({ path: `bench/sub/f${i}.md`, type: 'markdown' as const, content: 'seed' })));
let n = 0;
const t0 = performance.now();
const end = t0 + 4000;
await Promise.all(Array.from({ length: 16 }, async (_, w) => {
  for (let i = 0; performance.now() < end; i++) {
    await s.write(P, alice, { path: `bench/sub/f${(w * 61 + i) % 1000}.md`, type: 'markdown', content: `writer ${w} write ${i}\n` });
    n++;
  }
}));
console.log('writes/s', (n / ((performance.now() - t0) / 1000)).toFixed(0));
await f.cleanup();
