/**
 * Issue 11's figures (tools and search), against `cns serve` in its own process, loopback only:
 *   1. indexing 10,000 Markdown documents (~5 MB): lexical (no provider) and hybrid (a local
 *      embedding server in this process that answers at once, 384 dimensions), documents/s;
 *      baseline: chunking + FTS5 inserts of the same corpus in this process (no server, no git);
 *   2. query latency on >= 100,000 chunks, lexical and hybrid, 1 and 8 concurrent callers;
 *      baselines: GET /healthz, and the raw FTS5 / vec0 queries on the index file in this process;
 *   3. freshness: acknowledged write (REST, and `git push`) → the new text found by search, while
 *      20 writes/s go on;
 *   4. write latency and writes/s to a project with and without a search index, same run.
 * Run: node --import=tsx scripts/bench-search.ts [--docs 10000] [--chunk-docs 25000] [--probes 40] [--figures 1,2,3,4]
 * Bounded: the whole run aborts after 20 minutes.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { chunkMarkdown } from '../src/search/chunker.ts';
import { SearchReader } from '../src/search/searchReader.ts';
import { fmt, runLoad } from './lib/load.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DOCS = arg('docs', 10_000);
const CHUNK_DOCS = arg('chunk-docs', 25_000);
const PROBES = arg('probes', 40);
const FIGURES = new Set((process.argv[process.argv.indexOf('--figures') + 1] && process.argv.includes('--figures') ? process.argv[process.argv.indexOf('--figures') + 1]! : '1,2,3,4').split(',').map(Number));
const DIMS = 384;
const deadline = setTimeout(() => {
  console.error('bench-search: aborted after 20 minutes');
  process.exit(2);
}, 20 * 60_000);
deadline.unref();

const work = mkdtempSync(join(tmpdir(), 'cns-bench-search-'));
const rows: string[][] = [];
const report = (what: string, value: string, note = '') => {
  rows.push([what, value, note]);
  console.log(`${what}: ${value}${note ? `  (${note})` : ''}`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

// ------------------------------------------------------------------ corpus

const WORDS = (
  'system data index query search content node folder project version commit write read agent tool model vector ' +
  'server client request answer update delete move trash restore history change record field value schema table ' +
  'config setting option deploy install upgrade release feature issue error warning status report metric latency ' +
  'throughput memory storage network cache batch stream event queue worker thread process file document section ' +
  'heading paragraph summary detail example guide tutorial reference policy access scope permission owner member ' +
  'team organization customer invoice payment order product price market region country city river mountain ocean'
).split(' ');
// mulberry32: a seeded generator with a full 2^32 period (an LCG in float arithmetic cycles early).
let seed = 42;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
// Zipf-distributed words over a 30,000-word vocabulary (the English words above are the most
// frequent), so that word frequencies look like prose: a few words everywhere, a long tail.
const VOCAB = [...WORDS, ...Array.from({ length: 30_000 }, (_, i) => `${pick(['kal', 'mor', 'tes', 'vin', 'zu', 'pra', 'lo', 'ber', 'sim', 'dor'])}${pick(['ta', 'ri', 'en', 'os', 'ul', 'ak'])}${i.toString(36)}`)];
const CDF: number[] = [];
{
  let acc = 0;
  for (let r = 1; r <= VOCAB.length; r++) CDF.push((acc += 1 / r));
  for (let i = 0; i < CDF.length; i++) CDF[i] = CDF[i]! / acc;
}
const word = () => {
  const x = rand();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (CDF[m]! < x) lo = m + 1;
    else hi = m;
  }
  return VOCAB[lo]!;
};
const sentence = (n: number) => {
  const ws = Array.from({ length: n }, word);
  ws[0] = ws[0]!.charAt(0).toUpperCase() + ws[0]!.slice(1);
  return ws.join(' ') + '.';
};
const prose = (chars: number) => {
  let s = '';
  while (s.length < chars) s += (s ? ' ' : '') + sentence(6 + Math.floor(rand() * 10));
  return s;
};
/** ~500 bytes: a title, two sections. */
const smallDoc = (i: number) => `# ${sentence(3).slice(0, -1)} ${i}\n\n## ${pick(WORDS)} ${pick(WORDS)}\n\n${prose(200)}\n\n## ${pick(WORDS)} ${pick(WORDS)}\n\n${prose(200)}\n`;
/** Four sections of ~250 characters: four chunks. */
const chunkDoc = (i: number) =>
  `# Record ${i}\n\n` + Array.from({ length: 4 }, (_, s) => `## Part ${s} ${pick(WORDS)}\n\n${prose(240)}\n`).join('\n');

// ------------------------------------------------------------------ embedding server (answers at once)

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = fnv(w);
    v[h % DIMS]! += 1;
    v[(h >>> 9) % DIMS]! -= 0.5;
  }
  return v;
}
let embedRequests = 0;
const embedServer = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    embedRequests++;
    const { input, model } = JSON.parse(body) as { input: string[]; model: string };
    const data = input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model }));
  });
});
await new Promise<void>((r) => embedServer.listen(0, '127.0.0.1', () => r()));
const EMBED_URL = `http://127.0.0.1:${(embedServer.address() as AddressInfo).port}/v1`;

// ------------------------------------------------------------------ helpers

async function bulk(server: BenchServer, token: string, projectId: string, docs: { path: string; content: string }[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 2000) {
    const files = docs.slice(i, i + 2000).map((d) => ({ path: d.path, node_type: 'markdown', content: d.content }));
    await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files });
  }
}

async function waitIndexed(server: BenchServer, token: string, toolId: string, embeddings: boolean): Promise<{ documents: number; chunks: number; vector_index: { cells: number } }> {
  for (;;) {
    const s = await api(server.url, 'GET', `/tools/${toolId}/search-index`, token);
    if (s.status === 'error') throw new Error(`index error: ${s.last_error}`);
    // Hybrid: every vector stored, and the vector index's cells learned and filled (a steady state).
    if (s.status === 'ready' && s.lag_versions === 0 && (!embeddings || (s.pending_embeddings === 0 && !s.vector_index?.rebuilding))) return s;
    await sleep(20);
  }
}

/** A new project of the bench administrator (benchProject answers the same default project every time). */
let projectCount = 0;
async function freshProject(server: BenchServer): Promise<{ token: string; projectId: string }> {
  const { token } = await benchProject(server.url);
  const init = await api(server.url, 'POST', '/auth/initialize', token);
  const p = await api(server.url, 'POST', '/projects', token, { name: `bench-${++projectCount}`, org_id: init.organization.id });
  return { token, projectId: p.id };
}

const searchOnce = async (server: BenchServer, token: string, toolId: string, query: string) =>
  (await api(server.url, 'POST', `/tools/${toolId}/search`, token, { query, mode: 'lexical', top_k: 5 })).results as { path: string }[];

// ------------------------------------------------------------------ figure 1 (and the baseline)

function baselineIndexing(docs: string[]): number {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE f USING fts5(text, heading_path, tokenize = 'porter unicode61')`);
  const ins = db.prepare('INSERT INTO f (text, heading_path) VALUES (?, ?)');
  const t0 = performance.now();
  db.transaction(() => {
    for (const d of docs) for (const c of chunkMarkdown(d)) ins.run(c.text, c.headingPath);
  })();
  const s = (performance.now() - t0) / 1000;
  db.close();
  return docs.length / s;
}

async function indexFigure(server: BenchServer, hybrid: boolean, docs: string[]): Promise<{ rate: number; toolId: string; token: string; projectId: string }> {
  const { token, projectId } = await freshProject(server);
  await bulk(server, token, projectId, docs.map((content, i) => ({ path: `kb/d${Math.floor(i / 100)}/doc${i}.md`, content })));
  const t0 = performance.now();
  const created = await api(server.url, 'POST', '/tools/search', token, { project_id: projectId, name: 'bench' });
  const state = await waitIndexed(server, token, created.tool.id, hybrid);
  const seconds = (performance.now() - t0) / 1000;
  if (state.documents !== docs.length) throw new Error(`indexed ${state.documents} of ${docs.length}`);
  return { rate: docs.length / seconds, toolId: created.tool.id, token, projectId };
}

// ------------------------------------------------------------------ figure 2

async function queryFigure(server: BenchServer, dataDir: string): Promise<void> {
  const { token, projectId } = await freshProject(server);
  const docs = Array.from({ length: CHUNK_DOCS }, (_, i) => ({ path: `records/r${Math.floor(i / 500)}/rec${i}.md`, content: chunkDoc(i) }));
  await bulk(server, token, projectId, docs);
  const t0 = performance.now();
  const tool = (await api(server.url, 'POST', '/tools/search', token, { project_id: projectId, name: 'big' })).tool;
  const state = await waitIndexed(server, token, tool.id, true);
  report(
    `hybrid index of ${state.documents.toLocaleString('en')} documents / ${state.chunks.toLocaleString('en')} chunks`,
    `${fmt((performance.now() - t0) / 1000, 1)} s`,
    `${embedRequests} embedding requests so far; vector index of ${state.vector_index.cells} cells learned and filled`,
  );
  // What people search for: two words of one passage that exists.
  const queries = Array.from({ length: 500 }, () => {
    const ws = pick(docs).content.split('\n\n').filter((p) => !p.startsWith('#')).flatMap((p) => p.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []);
    return `${pick(ws)} ${pick(ws)}`;
  });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const spec = (mode: string) => (i: number) => ({ method: 'POST', path: `/api/v1/tools/${tool.id}/search`, headers, body: JSON.stringify({ query: queries[i % queries.length], mode, top_k: 10 }) });
  await runLoad(server.url, 4, 200, spec('hybrid')); // warm-up (page cache, query vectors of other queries)
  for (const c of [1, 8]) {
    const h = await runLoad(server.url, c, 2000, () => ({ method: 'GET', path: '/healthz' }));
    report(`baseline GET /healthz, ${c} caller(s)`, `p50 ${fmt(h.p50)} ms, p99 ${fmt(h.p99)} ms`);
    for (const mode of ['lexical', 'hybrid']) {
      const r = await runLoad(server.url, c, c === 1 ? 300 : 600, spec(mode));
      if (r.errors) throw new Error(`${r.errors} failed ${mode} queries`);
      report(`${mode} query over HTTP, ${c} caller(s), ${state.chunks.toLocaleString('en')} chunks`, `p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms`, `${fmt(r.rps, 0)} queries/s`);
    }
  }
  // Where the time goes: the raw queries on the index file, in this process, one caller.
  const db = new Database(join(dataDir, 'search', `${projectId}.sqlite`), { readonly: true });
  db.pragma('mmap_size = 2147483648'); // as the server opens it
  sqliteVec.load(db);
  const fts = db.prepare(`SELECT rowid, bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT 20`);
  const gen = (db.prepare(`SELECT value FROM meta WHERE key = 'vec_gen'`).get() as { value: string }).value;
  // Every vector of the table, no cell constraint: the exact answer, and the cost without the IVF.
  const knn = db.prepare(`SELECT rowid AS id, distance FROM vectors_${gen} WHERE embedding MATCH ? AND k = 50 ORDER BY distance`);
  const lat = (f: (i: number) => void, n: number) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      f(i);
      xs.push(performance.now() - t);
    }
    return xs;
  };
  const ftsLat = lat((i) => fts.all(queries[i % queries.length]!.split(' ').map((w) => `"${w}"`).join(' OR ')), 300);
  // The ranking the server runs first (chunks with both words): its mean bounds the queries/s two cores can rank at all.
  const andLat = lat((i) => fts.all(queries[i % queries.length]!.split(' ').map((w) => `"${w}"`).join(' ')), 500);
  const andMean = andLat.reduce((a, b) => a + b, 0) / andLat.length;
  const knnLat = lat((i) => knn.all(Buffer.from(new Float32Array(embed(queries[i % queries.length]!)).buffer)), 40);
  report('baseline raw FTS5 query with any of the words (OR) + bm25 (in process)', `p50 ${fmt(pct(ftsLat, 0.5))} ms`);
  report(
    'baseline raw FTS5 query with both words + bm25, the ranking alone (in process)',
    `p50 ${fmt(pct(andLat, 0.5))} ms, mean ${fmt(andMean)} ms, p99 ${fmt(pct(andLat, 0.99))} ms`,
    `at most ${fmt(2000 / andMean, 0)} rankings/s on 2 cores; 8 callers at p50 5 ms need ~1,600 queries/s`,
  );
  report(`baseline raw vec0 KNN, ${DIMS} dims, every vector scanned (exact; in process)`, `p50 ${fmt(pct(knnLat, 0.5))} ms`);
  // What the IVF gives up for its speed: of the exact 10 nearest, how many it returns (same code as the server).
  const index = new SearchReader(join(dataDir, 'search', `${projectId}.sqlite`));
  let kept = 0;
  const ivfLat: number[] = [];
  for (let i = 0; i < 200; i++) {
    const v = new Float32Array(embed(queries[i % queries.length]!));
    const exact = new Set((knn.all(Buffer.from(v.buffer)) as { id: number }[]).slice(0, 10).map((r) => r.id));
    const t = performance.now();
    const got = index.nearest(v, '', 10, 50);
    ivfLat.push(performance.now() - t);
    kept += got.filter((h) => exact.has(h.chunkId)).length;
  }
  index.close();
  report(`IVF nearest (${state.vector_index.cells} cells), in process: latency and recall@10 against the exact scan`, `p50 ${fmt(pct(ivfLat, 0.5))} ms, recall ${fmt(kept / 2000, 3)}`, 'synthetic hashed bag-of-words vectors, which cluster far less than embeddings');
  db.close();
}

// ------------------------------------------------------------------ figures 3 and 4

async function freshnessFigure(server: BenchServer, token: string, projectId: string, toolId: string): Promise<void> {
  let stop = false;
  let background = 0;
  // 20 writes/s all along: to the searched project during the REST probes; to another project of
  // the same server during the git probes (a push must be a fast-forward, and main would move
  // under it 20 times a second).
  let target = projectId;
  const other = await freshProject(server);
  const writer = (async () => {
    const start = performance.now();
    while (!stop) {
      const due = start + background * 50;
      if (performance.now() < due) await sleep(due - performance.now());
      const i = background++;
      const t = target === projectId ? token : other.token;
      await api(server.url, 'POST', `/content/${target}/write`, t, { path: `load/w${i % 200}.md`, node_type: 'markdown', content: `# Load ${i}\n\n${prose(300)}` });
    }
  })();
  writer.catch(() => undefined);
  const found = async (word: string, path: string, t0: number) => {
    for (;;) {
      if ((await searchOnce(server, token, toolId, word)).some((r) => r.path === path)) return performance.now() - t0;
      if (performance.now() - t0 > 30_000) throw new Error(`${word} not found after 30 s`);
      await sleep(2);
    }
  };
  const rest: number[] = [];
  const started = performance.now();
  for (let i = 0; i < PROBES; i++) {
    const w = `freshrest${i}x${Math.floor(rand() * 1e6)}`;
    await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: `probe/p${i}.md`, node_type: 'markdown', content: `# Probe\n\nThe word ${w} is new.` });
    rest.push(await found(w, `probe/p${i}.md`, performance.now()));
    await sleep(100);
  }
  const git: number[] = [];
  const home = join(work, 'git-home');
  mkdirSync(home, { recursive: true });
  const g = (args: string[], cwd = home) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('git', ['-c', 'credential.helper=', '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { cwd, env: { PATH: process.env.PATH!, HOME: home, GIT_TERMINAL_PROMPT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]}: ${err}`))));
    });
  const dir = join(home, 'clone');
  target = other.projectId;
  await sleep(500); // the last background write to the searched project lands before the clone
  await g(['clone', '--depth', '1', `${server.url.replace('://', `://cns:${token}@`)}/git/${projectId}.git`, dir]);
  for (let i = 0; i < Math.max(10, PROBES / 4); i++) {
    const w = `freshgit${i}x${Math.floor(rand() * 1e6)}`;
    // The server may add a commit of its own after a push: start from its main every time.
    await g(['fetch', '-q', '--depth', '1', 'origin', 'main'], dir);
    await g(['reset', '-q', '--hard', 'FETCH_HEAD'], dir);
    mkdirSync(join(dir, 'pushed'), { recursive: true });
    writeFileSync(join(dir, 'pushed', `g${i}.md`), `# Pushed\n\nThe word ${w} came by git.\n`);
    await g(['add', '-A'], dir);
    await g(['commit', '-q', '-m', `probe ${i}`], dir);
    await g(['push', '-q', 'origin', 'HEAD:main'], dir);
    git.push(await found(w, `pushed/g${i}.md`, performance.now()));
  }
  stop = true;
  await writer;
  const rate = background / ((performance.now() - started) / 1000);
  report(`freshness REST write → found (${rest.length} probes, ${fmt(rate, 1)} background writes/s)`, `p50 ${fmt(pct(rest, 0.5), 0)} ms, p99 ${fmt(pct(rest, 0.99), 0)} ms`);
  report(`freshness git push → found (${git.length} pushes)`, `p50 ${fmt(pct(git, 0.5), 0)} ms, p99 ${fmt(pct(git, 0.99), 0)} ms`);
}

async function writeCostFigure(server: BenchServer): Promise<void> {
  const plain = await freshProject(server);
  const indexed = await freshProject(server);
  const seedDocs = Array.from({ length: 500 }, (_, i) => ({ path: `w/doc${i}.md`, content: smallDoc(i) }));
  await bulk(server, plain.token, plain.projectId, seedDocs);
  await bulk(server, indexed.token, indexed.projectId, seedDocs);
  const tool = (await api(server.url, 'POST', '/tools/search', indexed.token, { project_id: indexed.projectId, name: 'w' })).tool;
  await waitIndexed(server, indexed.token, tool.id, false);
  const spec = (p: { token: string; projectId: string }) => (i: number) => ({
    method: 'POST',
    path: `/api/v1/content/${p.projectId}/write`,
    headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ path: `w/doc${i % 500}.md`, node_type: 'markdown', content: smallDoc(i + 1000) }),
  });
  const results = { plain: [] as { p50: number; rps: number }[], indexed: [] as { p50: number; rps: number }[] };
  // Interleaved rounds, so that drift of the shared machine hits both alike.
  for (let round = 0; round < 8; round++) {
    for (const [name, p] of [['plain', plain], ['indexed', indexed]] as const) {
      const seq = await runLoad(server.url, 1, 300, spec(p));
      const par = await runLoad(server.url, 8, 600, spec(p));
      results[name].push({ p50: seq.p50, rps: par.rps });
    }
  }
  const med = (xs: number[]) => pct(xs, 0.5);
  const a = { p50: med(results.plain.map((r) => r.p50)), rps: med(results.plain.map((r) => r.rps)) };
  const b = { p50: med(results.indexed.map((r) => r.p50)), rps: med(results.indexed.map((r) => r.rps)) };
  report('write p50 (1 writer), project without / with search index', `${fmt(a.p50)} / ${fmt(b.p50)} ms`, `${fmt(((b.p50 - a.p50) / a.p50) * 100, 1)} %`);
  report('writes/s (8 writers), project without / with search index', `${fmt(a.rps, 0)} / ${fmt(b.rps, 0)}`, `${fmt(((b.rps - a.rps) / a.rps) * 100, 1)} %`);
}

// ------------------------------------------------------------------ run

const servers: BenchServer[] = [];
/** Server output goes to a file; a server that dies says so at once. */
function watch(server: BenchServer, name: string): BenchServer {
  const log: string[] = [];
  server.child.stdout!.on('data', (c: Buffer) => log.push(c.toString()));
  server.child.once('exit', (code, signal) => {
    if (servers.includes(server)) {
      console.error(`bench-search: the ${name} server exited (${code ?? signal}); its last output:\n${log.join('').slice(-4000)}`);
      process.exit(3);
    }
  });
  return server;
}
try {
  const small = Array.from({ length: DOCS }, (_, i) => smallDoc(i));
  const bytes = small.reduce((n, d) => n + Buffer.byteLength(d), 0);
  report(`corpus: ${DOCS.toLocaleString('en')} Markdown documents`, `${fmt(bytes / 1e6, 1)} MB`);
  report('baseline: chunking + FTS5 inserts in process (no server, no git)', `${fmt(baselineIndexing(small), 0)} documents/s`);

  const lexDir = join(work, 'lexical');
  const lexical = watch(await startBenchServer(lexDir), 'lexical');
  servers.push(lexical);
  // Figure 3 follows writes into the index that figure 1 built.
  const lex = FIGURES.has(1) || FIGURES.has(3) ? await indexFigure(lexical, false, small) : null;
  if (lex) report('index, lexical (no embedding provider)', `${fmt(lex.rate, 0)} documents/s`, 'target >= 1,000');

  if (FIGURES.has(1) || FIGURES.has(2)) {
    const hybDir = join(work, 'hybrid');
    const hybrid = watch(await startBenchServer(hybDir, { CNS_EMBEDDINGS_BASE_URL: EMBED_URL, CNS_EMBEDDINGS_MODEL: 'bench-384', CNS_EMBEDDINGS_DIMENSIONS: String(DIMS) }), 'hybrid');
    servers.push(hybrid);
    if (FIGURES.has(1)) {
      const hyb = await indexFigure(hybrid, true, small);
      report(`index, hybrid (local instant embedding server, ${DIMS} dims)`, `${fmt(hyb.rate, 0)} documents/s`, `target >= 500; ${embedRequests} embedding requests`);
    }
    if (FIGURES.has(2)) await queryFigure(hybrid, hybDir);
    servers.pop();
    await hybrid.stop();
  }

  if (FIGURES.has(3)) await freshnessFigure(lexical, lex!.token, lex!.projectId, lex!.toolId);
  if (FIGURES.has(4)) await writeCostFigure(lexical);
} finally {
  for (const s of servers.splice(0)) await s.stop();
  embedServer.close();
  rmSync(work, { recursive: true, force: true });
}
console.log('\n| figure | value | note |\n| --- | --- | --- |');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
process.exit(0);
