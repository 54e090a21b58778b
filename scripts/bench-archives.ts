/**
 * Issue 33, archive and ranged-read figures, against one `cns serve` process:
 * 1. a project of FILES files (about FILE_BYTES each) streamed as zip: MB/s of content and of
 *    archive (target ≥ 50 MB/s) and the server's RSS growth while it streams (target < 100 MB);
 * 2. that zip imported into an empty project as one commit (target < 10 s), while another client
 *    calls /healthz back to back (its slowest answer: how long the import held the event loop);
 * 3. a TEXT_MB text file (100-byte lines, imported as a tar.gz) read by lines 500,000-500,100 (or
 *    the middle 101 lines of a smaller file) READS times: p50 (target < 50 ms); the first read,
 *    which reads and indexes the blob, is shown apart.
 *
 * Run: node --import=tsx scripts/bench-archives.ts [files=10000] [fileBytes=5000] [textMB=50] [reads=100]
 * A small check: node --import=tsx scripts/bench-archives.ts 200 2000 2 20
 */
import { openAsBlob, readFileSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const FILES = Number(process.argv[2] ?? 10_000);
const FILE_BYTES = Number(process.argv[3] ?? 5000);
const TEXT_MB = Number(process.argv[4] ?? 50);
const READS = Number(process.argv[5] ?? 100);

const words = 'content node service archive stream project folder version commit agent markdown json file quokka'.split(' ');
/** Text that compresses like prose (not a run of one byte). */
function prose(seed: number, bytes: number): string {
  let s = '';
  let x = seed * 2654435761;
  while (s.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += words[x % words.length] + (x % 13 === 0 ? '.\n' : ' ');
  }
  return s.slice(0, bytes);
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mb = (n: number) => n / 1024 / 1024;

const work = mkdtempSync(join(tmpdir(), 'cns-bench-archives-'));
const server = await startBenchServer(join(work, 'data'));
try {
  const { token, projectId } = await benchProject(server.url);
  const org = (await api(server.url, 'GET', `/projects/${projectId}`, token)).org_id as string;
  const newProject = async (name: string) => (await api(server.url, 'POST', '/projects/', token, { name, org_id: org })).id as string;
  const commits = async (pid: string) => (await api(server.url, 'GET', `/projects/${pid}/dashboard`, token)).commits as number;

  // 1. The source project, written in bulk commits of at most 2,000 files.
  let contentBytes = 0;
  for (let start = 0; start < FILES; start += 2000) {
    const files = [];
    for (let i = start; i < Math.min(FILES, start + 2000); i++) {
      const text = prose(i, FILE_BYTES);
      contentBytes += Buffer.byteLength(text);
      files.push(i % 3 === 0 ? { path: `d${i % 50}/f${i}.txt`, node_type: 'file', content: Buffer.from(text).toString('base64') } : { path: `d${i % 50}/f${i}.md`, node_type: 'markdown', content: text });
    }
    await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files });
  }

  const zipFile = join(work, 'export.zip');
  const rssBefore = rssOf(server.child.pid!);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(server.child.pid!))), 20);
  const t0 = performance.now();
  const res = await fetch(`${server.url}/api/v1/content/${projectId}/archive?format=zip`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`archive: ${res.status} ${await res.text()}`);
  let archiveBytes = 0;
  await pipeline(
    Readable.fromWeb(res.body as never),
    async function* (source: AsyncIterable<Buffer>) {
      for await (const c of source) {
        archiveBytes += c.length;
        yield c;
      }
    },
    createWriteStream(zipFile),
  );
  const exportS = (performance.now() - t0) / 1000;
  clearInterval(sampler);

  // 2. The same archive into an empty project.
  const target = await newProject('import-target');
  const before = await commits(target);
  const form = new FormData();
  form.set('file', await openAsBlob(zipFile), 'export.zip');
  // Meanwhile another client calls /healthz back to back: the slowest answer is how long the import held the event loop.
  let importing = true;
  const probeMs: number[] = [];
  const probe = (async () => {
    while (importing) {
      const s = performance.now();
      await (await fetch(`${server.url}/healthz`)).arrayBuffer();
      probeMs.push(performance.now() - s);
    }
  })();
  const t1 = performance.now();
  const imp = await fetch(`${server.url}/api/v1/content/${target}/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const importBody = (await imp.json()) as { data: { files: number } };
  const importS = (performance.now() - t1) / 1000;
  importing = false;
  await probe;
  if (imp.status !== 200) throw new Error(`import: ${imp.status} ${JSON.stringify(importBody)}`);
  const importCommits = (await commits(target)) - before;

  // 3. A large text file, brought in as a tar.gz, read by lines.
  const lineCount = Math.floor((TEXT_MB * 1024 * 1024) / 100);
  const tgz = join(work, 'big.tar.gz');
  const lines = Buffer.alloc(lineCount * 100, 0x2e);
  for (let i = 0; i < lineCount; i++) {
    lines.write(`line ${i + 1} `, i * 100, 'latin1');
    lines[i * 100 + 99] = 0x0a;
  }
  const p = pack();
  p.entry({ name: 'big.txt', size: lines.length }, lines);
  p.finalize();
  await pipeline(p, createGzip({ level: 1 }), createWriteStream(tgz));
  const textForm = new FormData();
  textForm.set('file', await openAsBlob(tgz), 'big.tar.gz');
  const textImport = await fetch(`${server.url}/api/v1/content/${projectId}/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: textForm });
  if (textImport.status !== 200) throw new Error(`text import: ${textImport.status} ${await textImport.text()}`);
  const first = lineCount >= 500_100 ? 500_000 : Math.max(1, Math.floor(lineCount / 2) - 50);
  const url = `${server.url}/api/v1/content/${projectId}/cat?path=big.txt&lines=${first}-${first + 100}`;
  const read = async () => {
    const s = performance.now();
    const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json()) as { data: { content: string; total_lines: number } };
    const ms = performance.now() - s;
    if (r.status !== 200 || !body.data.content.startsWith(`line ${first} `) || body.data.total_lines !== lineCount) throw new Error(`ranged read: ${r.status}`);
    return ms;
  };
  const coldMs = await read();
  const times: number[] = [];
  for (let i = 0; i < READS; i++) times.push(await read());

  const result = {
    files: FILES,
    content_mb: Number(mb(contentBytes).toFixed(1)),
    export_zip: {
      seconds: Number(exportS.toFixed(2)),
      archive_mb: Number(mb(archiveBytes).toFixed(1)),
      content_mb_per_s: Number((mb(contentBytes) / exportS).toFixed(1)),
      archive_mb_per_s: Number((mb(archiveBytes) / exportS).toFixed(1)),
      rss_growth_mb: Number(mb(rssPeak - rssBefore).toFixed(1)),
    },
    import_zip: {
      seconds: Number(importS.toFixed(2)),
      files: importBody.data.files,
      commits: importCommits,
      healthz_during: { answers: probeMs.length, p50_ms: Number(pct(probeMs, 50).toFixed(1)), max_ms: Number(Math.max(...probeMs).toFixed(1)) },
    },
    ranged_read: { text_mb: TEXT_MB, lines: lineCount, range: `${first}-${first + 100}`, first_ms: Number(coldMs.toFixed(1)), p50_ms: Number(pct(times, 50).toFixed(2)), p99_ms: Number(pct(times, 99).toFixed(2)) },
  };
  const figures = {
    'zip ≥ 50 MB/s (content)': result.export_zip.content_mb_per_s >= 50,
    'RSS growth < 100 MB': result.export_zip.rss_growth_mb < 100,
    'import < 10 s, one commit': importS < 10 && importCommits === 1,
    'ranged read p50 < 50 ms': result.ranged_read.p50_ms < 50,
  };
  console.log(JSON.stringify({ ...result, figures }, null, 2));
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
