import test from 'ava';
import { readFileSync } from 'node:fs';
import { createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { textPages, writeBombPdf, writePdf } from './fixtures/pdf.ts';
import { workDir } from './fixtures/workDir.ts';
import { submitFiles, waitTask } from './ingestClient.ts';

// A PDF bomb (thousands of pages sharing one huge Flate stream) must not hold the ingestion
// workers: each conversion has a wall-clock limit, a page limit and a decompressed-bytes cap
// (each failing the task with its own code and killing the conversion process), and no project
// holds every worker while another waits. Small limits keep the tests fast; the servers run in
// this process, so their conversion processes are this process's children.

const MiB = 1024 * 1024;
const work = workDir('limits');

/** A small file whose conversion would take minutes: 200 pages that each inflate and parse the same 1 MiB stream. */
const bombFile = work.path('bomb.pdf');
writeBombPdf(bombFile, 200, 1 * MiB);
const bomb = (name = 'bomb.pdf') => ({ name, content: readFileSync(bombFile), type: 'application/pdf' });

/** The conversion child processes alive now. */
function conversionChildren(): number[] {
  const text = readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim();
  const pids = text ? text.split(' ').map(Number) : [];
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('conversionChild');
    } catch {
      return false;
    }
  });
}

/**
 * What became of the conversion processes alive `before` (one of which converted the file):
 * the converting one must be gone when its task failed; the others (a warm spare the pool
 * keeps while every worker converts) idle on, and none was added.
 */
function afterFailure(before: number[]): { gone: number[]; added: number[] } {
  const now = conversionChildren();
  return { gone: before.filter((pid) => !now.includes(pid) || isZombie(pid)), added: now.filter((pid) => !before.includes(pid)) };
}

function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until<T>(what: string, check: () => T | null | Promise<T | null>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function serverWith(env: Record<string, string>): Promise<{ server: TestServer; token: string; projectId: string; orgId: string }> {
  const server = await startTestServer({}, env);
  const token = (await server.login()).token;
  return { server, token, ...(await defaultProject(server, token)) };
}

async function submit(s: { server: TestServer; token: string }, projectId: string, files: { name: string; content: string | Uint8Array; type?: string }[]): Promise<string[]> {
  const res = await submitFiles(s.server, s.token, { project_id: projectId, path: 'in' }, files);
  if (res.status !== 202) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.tasks.map((x: any) => x.id);
}

test.serial('a conversion past CNS_INGEST_CONVERSION_TIMEOUT_S fails "timeout", and its process is gone when the task says so', async (t) => {
  // 3 s: the bomb never ends, and the small file after it must fit in the same budget on a busy CI machine (1 s did not, at load 12).
  const s = await serverWith({ CNS_INGEST_WORKERS: '1', CNS_INGEST_CONVERSION_TIMEOUT_S: '3', CNS_INGEST_MAX_DECOMPRESSED_BYTES: String(2 ** 40) });
  t.teardown(() => s.server.stop());
  const [id] = await submit(s, s.projectId, [bomb()]);
  // This server's conversion processes while it converts the bomb: the one converting it, and the spare started with it.
  const pids = await until('the conversion processes', () => {
    const found = conversionChildren();
    return found.length === 2 ? found : null;
  });
  const task = await waitTask(s.server, s.token, id!);
  t.is(task.status, 'failed');
  t.is(task.error.code, 'timeout');
  t.regex(task.error.message, /longer than 3 s.*CNS_INGEST_CONVERSION_TIMEOUT_S/);
  const { gone, added } = afterFailure(pids);
  t.is(gone.length, 1, 'the process converting the bomb was killed before the task failed');
  t.deepEqual(added, []);
  const [next] = await submit(s, s.projectId, [{ name: 'after.txt', content: 'after the bomb' }]);
  t.is((await waitTask(s.server, s.token, next!)).status, 'succeeded', 'the worker goes on');
});

test.serial('a PDF over CNS_INGEST_MAX_PDF_PAGES fails "too_many_pages", one over CNS_INGEST_MAX_DECOMPRESSED_BYTES fails "too_large"; each kills its process', async (t) => {
  const s = await serverWith({ CNS_INGEST_WORKERS: '1', CNS_INGEST_MAX_PDF_PAGES: '10', CNS_INGEST_MAX_DECOMPRESSED_BYTES: String(8 * MiB) });
  t.teardown(() => s.server.stop());
  const pdf = (name: string, pages: number) => {
    writePdf(work.path(name), textPages(pages, 5));
    return { name, content: readFileSync(work.path(name)), type: 'application/pdf' };
  };
  // Within the limits: ten pages, and pages sharing a stream whose uses add up to less than 8 MiB.
  writeBombPdf(work.path('shared.pdf'), 5, 1 * MiB);
  const fine = await submit(s, s.projectId, [pdf('ten.pdf', 10), { name: 'shared.pdf', content: readFileSync(work.path('shared.pdf')) }]);
  for (const id of fine) t.is((await waitTask(s.server, s.token, id)).status, 'succeeded');

  const overLimit = async (file: { name: string; content: Uint8Array }, code: string, message: RegExp) => {
    // Warm processes, one of which takes the file.
    const before = conversionChildren();
    t.true(before.length >= 1);
    const [id] = await submit(s, s.projectId, [file]);
    const task = await waitTask(s.server, s.token, id!);
    t.is(task.status, 'failed', file.name);
    t.is(task.error.code, code);
    t.regex(task.error.message, message);
    const { gone, added } = afterFailure(before);
    t.is(gone.length, 1, `${file.name}: its conversion process was killed before the task failed`);
    t.deepEqual(added, []);
    const [ok] = await submit(s, s.projectId, [{ name: 'next.txt', content: 'next' }]);
    t.is((await waitTask(s.server, s.token, ok!)).status, 'succeeded', 'the worker goes on');
  };
  await overLimit(pdf('eleven.pdf', 11), 'too_many_pages', /11 pages, more than the 10 .*CNS_INGEST_MAX_PDF_PAGES/);
  writeBombPdf(work.path('small-bomb.pdf'), 5, 4 * MiB);
  await overLimit({ name: 'small-bomb.pdf', content: readFileSync(work.path('small-bomb.pdf')) }, 'too_large', /more than 8388608 bytes .*CNS_INGEST_MAX_DECOMPRESSED_BYTES/);
});

test.serial('two bomb PDFs of one project do not hold both workers: a text file of another project finishes within 5 s', async (t) => {
  // Limits high enough that only fairness can let the other project through.
  const s = await serverWith({ CNS_INGEST_WORKERS: '2', CNS_INGEST_CONVERSION_TIMEOUT_S: '600', CNS_INGEST_MAX_DECOMPRESSED_BYTES: String(2 ** 40) });
  t.teardown(() => s.server.stop());
  const other = await createProject(s.server, s.token, s.orgId, 'other');
  const bombs = await submit(s, s.projectId, [bomb('bomb-1.pdf'), bomb('bomb-2.pdf')]);
  // Both bombs are converting: project A holds both workers.
  for (const id of bombs) await waitTask(s.server, s.token, id, (x) => x.status === 'running' && x.progress?.done > 0);
  const task = async (id: string) => (await s.server.api('GET', `/ingest/tasks/${id}`, { token: s.token })).body.data;
  const before = await Promise.all(bombs.map(task));

  const [text] = await submit(s, other, [{ name: 'hello.txt', content: 'ten bytes.' }]);
  const done = await waitTask(s.server, s.token, text!, undefined, 60_000);
  t.is(done.status, 'succeeded');
  const took = Date.parse(done.finished_at) - Date.parse(done.created_at);
  t.log(`the other project's file took ${took} ms (started after ${Date.parse(done.started_at) - Date.parse(done.created_at)} ms)`);
  t.true(took < 5000, `the other project's file took ${took} ms`);

  const after = await Promise.all(bombs.map(task));
  t.true(after.every((x) => x.status === 'running' || x.status === 'queued'), 'the bombs are still going (none failed)');
  const restarted = after.filter((x, i) => x.status === 'queued' || x.started_at !== before[i].started_at);
  t.is(restarted.length, 1, 'one bomb gave its worker back and was queued again; the other kept its worker');
  // Cancelling kills their conversions (pool.test.ts checks the processes).
  for (const id of bombs) t.is((await s.server.api('DELETE', `/ingest/tasks/${id}`, { token: s.token })).body.data.status, 'cancelled');
});
