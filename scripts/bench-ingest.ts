/**
 * Issue 15's figure 3, against a server in its own process: 1,000 small files of mixed types
 * (TXT, MD, CSV, JSON, HTML, PDF, DOCX) submitted at once (ten multipart requests of 100 files,
 * the default CNS_INGEST_MAX_FILES, sent together), then:
 *   - all finish (succeeded), and the throughput, files/s, from the first submission to the last
 *     task finished;
 *   - the API stays responsive: `GET /content/{project}/cat` of a small node, sampled one after
 *     the other for the whole run, p50/p99 (target p99 < 50 ms).
 * Run when the machine is idle (load < 1.5): node --import=tsx scripts/bench-ingest.ts [files=1000]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeDocx } from '../test/ingest/fixtures/docx.ts';
import { writePdf } from '../test/ingest/fixtures/pdf.ts';
import { fmt } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const FILES = Number(process.argv[2] ?? 1000);
const PER_REQUEST = 100;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-ingest-'));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Small files of each kind; the binary ones are real PDFs and DOCX files made once. */
function sources(): { name: string; type: string; bytes: Uint8Array }[] {
  const pdfFile = join(work, 'small.pdf');
  writePdf(pdfFile, [['A small report', 'Its first page.'], ['Its second page.']]);
  const docxFile = join(work, 'small.docx');
  writeDocx(docxFile, [{ heading: 1, text: 'Minutes' }, { text: 'Decisions were taken.' }, { table: [['a', 'b'], ['1', '2']] }]);
  const pdf = readFileSync(pdfFile);
  const docx = readFileSync(docxFile);
  const text = (i: number) => `Note ${i}\n\n${'Some words about the subject. '.repeat(40)}`;
  const kinds: ((i: number) => { name: string; type: string; bytes: Uint8Array })[] = [
    (i) => ({ name: `note-${i}.txt`, type: 'text/plain', bytes: Buffer.from(text(i)) }),
    (i) => ({ name: `page-${i}.md`, type: 'text/markdown', bytes: Buffer.from(`# Page ${i}\n\n${text(i)}`) }),
    (i) => ({ name: `rows-${i}.csv`, type: 'text/csv', bytes: Buffer.from('id,name,amount\n' + Array.from({ length: 50 }, (_, r) => `${r},item ${r},${r * 1.5}`).join('\n')) }),
    (i) => ({ name: `data-${i}.json`, type: 'application/json', bytes: Buffer.from(JSON.stringify({ id: i, items: Array.from({ length: 20 }, (_, r) => ({ r, v: `value ${r}` })) })) }),
    (i) => ({ name: `article-${i}.html`, type: 'text/html', bytes: Buffer.from(`<!doctype html><html><head><title>Article ${i}</title></head><body><article><h1>Article ${i}</h1><p>${text(i)}</p></article></body></html>`) }),
    (i) => ({ name: `report-${i}.pdf`, type: 'application/pdf', bytes: pdf }),
    (i) => ({ name: `minutes-${i}.docx`, type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: docx }),
  ];
  return Array.from({ length: FILES }, (_, i) => kinds[i % kinds.length]!(i));
}

async function main(): Promise<void> {
  const loadStart = loadavg()[0]!;
  const files = sources();
  const server = await startBenchServer(join(work, 'data'));
  try {
    const { token, projectId } = await benchProject(server.url);
    await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: 'bench/read.md', node_type: 'markdown', content: '# Read me\n\nWhile the queue works.\n' });
    const auth = { authorization: `Bearer ${token}` };
    const cat = `${server.url}/api/v1/content/${projectId}/cat?path=bench/read.md`;
    for (let i = 0; i < 20; i++) await (await fetch(cat, { headers: auth })).arrayBuffer(); // warm-up

    // Reads one after the other for the whole run.
    let sampling = true;
    let uploading = true;
    const latencies: number[] = [];
    /** Samples taken after every submission was answered (the uploads are parsed on the event loop). */
    const afterUpload: number[] = [];
    const sampler = (async () => {
      while (sampling) {
        const t0 = performance.now();
        const res = await fetch(cat, { headers: auth });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`cat answered ${res.status}`);
        latencies.push(performance.now() - t0);
        if (!uploading) afterUpload.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const started = performance.now();
    const batches = Array.from({ length: Math.ceil(files.length / PER_REQUEST) }, (_, b) => files.slice(b * PER_REQUEST, (b + 1) * PER_REQUEST));
    const submitted = await Promise.all(
      batches.map(async (batch, b) => {
        const form = new FormData();
        form.append('project_id', projectId);
        form.append('path', `ingested/${b}`);
        for (const f of batch) form.append('files', new Blob([new Uint8Array(f.bytes)], { type: f.type }), f.name);
        const res = await fetch(`${server.url}/api/v1/ingest/submit/file`, { method: 'POST', headers: auth, body: form });
        const body = (await res.json()) as { data: { tasks: { id: string }[] }; message: string };
        if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${body.message}`);
        return body.data.tasks.map((t) => t.id);
      }),
    );
    const submitMs = performance.now() - started;
    uploading = false;
    const ids = submitted.flat();

    // Until the queue is empty, then every task's outcome.
    for (;;) {
      const health = await api(server.url, 'GET', '/ingest/health', token);
      if (health.queue.queued === 0 && health.queue.running === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const wall = performance.now() - started;
    sampling = false;
    await sampler;
    const statuses: Record<string, number> = {};
    const failures: string[] = [];
    for (let i = 0; i < ids.length; i += 200) {
      const { tasks } = await api(server.url, 'POST', '/ingest/tasks/batch', token, { task_ids: ids.slice(i, i + 200) });
      for (const t of tasks) {
        statuses[t.status] = (statuses[t.status] ?? 0) + 1;
        if (t.status !== 'succeeded' && failures.length < 3) failures.push(`${t.source}: ${t.error?.message}`);
      }
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(`figure 3 (${ids.length} files of 7 kinds, ${batches.length} submissions of ${PER_REQUEST} sent together; workers 2; load at the start ${loadStart.toFixed(2)})`);
    console.log(`  submissions answered 202 in ${fmt(submitMs)} ms (all ${batches.length})`);
    console.log(`  outcomes: ${JSON.stringify(statuses)}${failures.length ? `; first failures: ${failures.join(' | ')}` : ''}`);
    console.log(`  all finished in ${fmt(wall / 1000)} s: ${fmt(ids.length / (wall / 1000))} files/s`);
    console.log(`  GET /content/…/cat during the run: ${sorted.length} samples, p50 ${fmt(percentile(sorted, 0.5))} ms, p99 ${fmt(percentile(sorted, 0.99))} ms, max ${fmt(sorted.at(-1) ?? 0)} ms (target p99 < 50)`);
    const after = [...afterUpload].sort((a, b) => a - b);
    console.log(`    of which after the uploads were answered: ${after.length} samples, p50 ${fmt(percentile(after, 0.5))} ms, p99 ${fmt(percentile(after, 0.99))} ms`);
    console.log(`  load average at the end: ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
