/**
 * Issue 32, the cost of PuppyOne's duplicate names (`items` beside our own `nodes`, `preview_md`
 * beside `content`): a 1,000-entry folder listed through `GET /nodes?parent_id=` by two `cns
 * serve` processes of the same code with the same content, one started with
 * CNS_PUPPYONE_COMPAT=on, requests alternating between them in the same run. Reported per listing
 * (without and with include_content): answer bytes, time p50 and p90 at one connection.
 *
 * Run: node --import=tsx scripts/bench-list-items.ts [entries=1000] [rounds=200]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const ENTRIES = Number(process.argv[2] ?? 1_000);
const ROUNDS = Number(process.argv[3] ?? 200);

interface Side {
  label: string;
  server: BenchServer;
  token: string;
  listing: string;
}

async function prepare(label: string, dataDir: string, env: Record<string, string>): Promise<Side> {
  const server = await startBenchServer(dataDir, env);
  const { token, projectId } = await benchProject(server.url);
  const folder = await api(server.url, 'POST', '/nodes/folder', token, { project_id: projectId, name: 'many' });
  // Markdown and json alternately, small contents, one commit per 500.
  for (let start = 0; start < ENTRIES; start += 500) {
    const nodes = Array.from({ length: Math.min(500, ENTRIES - start) }, (_, k) => {
      const i = start + k;
      return i % 2 ? { name: `n${i}.json`, type: 'json', content: { i, title: `entry ${i}` } } : { name: `n${i}.md`, type: 'markdown', content: `# entry ${i}\n` };
    });
    await api(server.url, 'POST', '/nodes/bulk-create', token, { project_id: projectId, parent_id: folder.id, nodes });
  }
  return { label, server, token, listing: `/nodes/?project_id=${projectId}&parent_id=${folder.id}` };
}

async function timedGet(side: Side, query: string): Promise<{ ms: number; bytes: number; body: string }> {
  const s = performance.now();
  const res = await fetch(`${side.server.url}/api/v1${side.listing}${query}`, { headers: { authorization: `Bearer ${side.token}` } });
  const body = await res.text();
  const ms = performance.now() - s;
  if (!res.ok) throw new Error(`${side.label}: ${res.status} ${body.slice(0, 200)}`);
  return { ms, bytes: Buffer.byteLength(body), body };
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-items-'));
const sides: Side[] = [];
try {
  sides.push(await prepare('compat on', join(work, 'on'), { CNS_PUPPYONE_COMPAT: 'on' }));
  sides.push(await prepare('compat off', join(work, 'off'), {}));
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
  for (const query of ['', '&include_content=true']) {
    const times = sides.map(() => [] as number[]);
    const bytes = sides.map(() => 0);
    let withoutItems = 0;
    for (let i = 0; i < 10; i++) for (const side of sides) await timedGet(side, query); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(k + r) % sides.length]!; // alternate which goes first
        const got = await timedGet(side, query);
        const idx = sides.indexOf(side);
        times[idx]!.push(got.ms);
        bytes[idx] = got.bytes;
        if (idx === 0 && r === 0) {
          const parsed = JSON.parse(got.body);
          if (parsed.data.items?.length !== ENTRIES) throw new Error(`expected ${ENTRIES} items, got ${parsed.data.items?.length}`);
          delete parsed.data.items;
          withoutItems = Buffer.byteLength(JSON.stringify(parsed));
        }
      }
    }
    console.log(`\nGET /nodes of a ${ENTRIES}-entry folder${query ? ' with include_content=true' : ''} (${ROUNDS} rounds, 1 connection):`);
    console.log(`  answer bytes with items: ${bytes[0]} (without items the same answer is ${withoutItems}: x${(bytes[0]! / withoutItems).toFixed(2)})`);
    sides.forEach((side, i) => console.log(`  ${side.label.padEnd(12)} ${String(bytes[i]).padStart(9)} B, p50 ${pct(times[i]!, 0.5).toFixed(2)} ms, p90 ${pct(times[i]!, 0.9).toFixed(2)} ms`));
    console.log(`  time ratio on/off: p50 x${(pct(times[0]!, 0.5) / pct(times[1]!, 0.5)).toFixed(2)}, p90 x${(pct(times[0]!, 0.9) / pct(times[1]!, 0.9)).toFixed(2)}`);
  }
} finally {
  for (const side of sides) await side.server.stop();
  rmSync(work, { recursive: true, force: true });
}
