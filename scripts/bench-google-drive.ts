/**
 * Google Drive connector figures (issue 17), against `cns serve` in its own process pulling from a
 * fake Drive v3 over real HTTP (node:http on 127.0.0.1; the model of
 * test/platform/connectors/fixtures/googleDrive/driveModel.ts: files.list with pageToken, files.get
 * with alt=media, files.export, changes.getStartPageToken, changes.list), reached through
 * `CNS_GOOGLE_DRIVE_API_URL`:
 *   1. a first pull of a folder of BENCH_FILES files (default 5,000; in 50 subfolders, mostly
 *      plain files, a tenth Google Docs and a tenth Google Sheets): items/s of our own time, that
 *      is items / (the run's time − the time the fake spent answering);
 *   2. an incremental run after BENCH_CHANGED (10) edits: the HTTP calls beyond the changed items,
 *      and our own time (ms).
 *
 * The connection is made through the service's own OAuth code path: GET /oauth/google-drive/authorize,
 * then the browser's callback, whose code the service exchanges at Google's token endpoint. The
 * settings can point a provider's API elsewhere (CNS_<PROVIDER>_API_URL) but not its OAuth
 * endpoints (the ProviderRegistry's endpoint overrides are not reachable from settings), so the
 * service process is started with a small preload (NODE_OPTIONS --import of a data: module) that
 * sends its https requests for *.googleapis.com (the token endpoint, UserInfo) to the fake. Drive
 * API calls go to the fake directly, as configured, and are not touched by the preload.
 *
 * Prints a table and exits 1 when a figure misses its target. Run it alone on the machine:
 *
 *   node --import=tsx scripts/bench-google-drive.ts
 *   BENCH_FILES=500 node --import=tsx scripts/bench-google-drive.ts
 *
 * BENCH_SERVER_LOG=1 shows the service's log; BENCH_KEEP=1 keeps its data folder.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DOC, DriveModel, FOLDER, SHEET } from '../test/platform/connectors/fixtures/googleDrive/driveModel.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0`);
  return v;
};

const FILES = num('BENCH_FILES', 5_000);
const CHANGED = num('BENCH_CHANGED', 10);
const FOLDERS = Math.max(1, Math.min(50, Math.ceil(FILES / 100)));
const RUN_DEADLINE_MS = num('BENCH_RUN_DEADLINE_S', 1800) * 1000;
/** Targets: the first pull's own throughput, and the incremental run's calls beyond the changed items and own time. */
const TARGET_ITEMS_PER_S = 500;
const TARGET_EXTRA_CALLS = 5;
const TARGET_INCREMENTAL_MS = 500;

const ROOT = 'benchRootFolder00000001';
const ACCESS_TOKEN = 'ya29.bench-drive-access';
const GOOGLE_APP = { id: '000000000000-bench.apps.googleusercontent.com', secret: 'GOCSPX-bench-secret' };

interface Run {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';
  started_at: string;
  finished_at: string | null;
  pulled: { created: number; updated: number; deleted: number };
  error: string | null;
  errors: string[];
  http_calls: number;
}

/** The fake: Drive, Google's token endpoint and UserInfo, counting requests and the time spent answering. */
interface Fake {
  url: string;
  model: DriveModel;
  stats(): { requests: number; handlingMs: number; byRoute: Record<string, number> };
  reset(): void;
  close(): Promise<void>;
}

async function startFake(): Promise<Fake> {
  const model = new DriveModel();
  let requests = 0;
  let handlingMs = 0;
  let byRoute: Record<string, number> = {};
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const t0 = performance.now();
      const url = new URL(req.url ?? '/', 'http://fake');
      requests++;
      const route = url.pathname.startsWith('/drive/v3/files/') ? (url.pathname.endsWith('/export') ? 'export' : url.searchParams.get('alt') === 'media' ? 'download' : 'files.get') : url.pathname;
      byRoute[route] = (byRoute[route] ?? 0) + 1;
      let status: number;
      let headers: Record<string, string>;
      let body: Buffer;
      if (req.method === 'POST' && url.pathname === '/token') {
        // Google's token endpoint: the code exchange (and any refresh) gets the bench's access token.
        [status, headers, body] = [200, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ access_token: ACCESS_TOKEN, expires_in: 3599, refresh_token: '1//bench-refresh', scope: 'https://www.googleapis.com/auth/drive.readonly https://www.googleapis.com/auth/userinfo.email', token_type: 'Bearer' }))];
      } else if (url.pathname === '/oauth2/v3/userinfo') {
        [status, headers, body] = [200, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ sub: '1', email: 'bench@example.com', email_verified: true }))];
      } else if (req.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) {
        [status, headers, body] = [401, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }))];
      } else {
        const a = model.handle({ method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: {} });
        [status, headers, body] = [a.status, a.headers, a.body];
      }
      res.writeHead(status, { ...headers, 'content-length': String(body.length) });
      res.end(body);
      handlingMs += performance.now() - t0;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    model,
    stats: () => ({ requests, handlingMs, byRoute: { ...byRoute } }),
    reset() {
      requests = 0;
      handlingMs = 0;
      byRoute = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The service's preload: its https requests to *.googleapis.com (the OAuth token endpoint,
 * UserInfo) go to the fake over http instead. Plain JavaScript in a data: URL, so the service
 * process loads nothing of the benchmark's.
 */
function googlePreload(fakeUrl: string): string {
  const code = `
import http from 'node:http';
import https from 'node:https';
const fake = new URL(${JSON.stringify(fakeUrl)});
const original = https.request;
https.request = function (url, options, callback) {
  const target = typeof url === 'string' ? new URL(url) : url instanceof URL ? url : null;
  if (target && /(^|\\.)googleapis\\.com$/.test(target.hostname)) {
    const opts = typeof options === 'object' && options !== null ? { ...options } : {};
    delete opts.lookup;
    return http.request(new URL(target.pathname + target.search, fake), opts, typeof options === 'function' ? options : callback);
  }
  return original.apply(this, arguments);
};`;
  return `--import=data:text/javascript,${encodeURIComponent(code)}`;
}

/** A folder of FILES files in FOLDERS subfolders: a tenth Docs, a tenth Sheets, the rest plain files of 1-3 KB. */
function populate(model: DriveModel): string[] {
  model.add({ id: ROOT, name: 'Bench', mimeType: FOLDER, parents: ['myDrive'] });
  const folders = Array.from({ length: FOLDERS }, (_, i) => model.folder(`Folder ${String(i).padStart(2, '0')}`, ROOT, `benchFolder${String(i).padStart(12, '0')}`));
  const ids: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const parent = folders[i % folders.length]!;
    const words = Array.from({ length: 150 + (i % 300) }, (_, w) => `word${(i * 7 + w) % 997}`).join(' ');
    if (i % 10 === 0) ids.push(model.add({ name: `Doc ${i}`, mimeType: DOC, parents: [parent], content: `# Doc ${i}\n\n${words}\n` }));
    else if (i % 10 === 1) ids.push(model.add({ name: `Sheet ${i}`, mimeType: SHEET, parents: [parent], content: `Name,Count,Note\n${Array.from({ length: 20 }, (_, r) => `row${r},${r * i},${createHash('md5').update(`${i}:${r}`).digest('hex')}`).join('\n')}\n` }));
    else ids.push(model.add({ name: `file-${i}.txt`, mimeType: 'text/plain', parents: [parent], content: words }));
  }
  return ids;
}

const runMs = (run: Run) => Date.parse(run.finished_at!) - Date.parse(run.started_at);

async function bench(): Promise<void> {
  const others = busyBenches();
  if (others.length > 0) console.log(`note: other benchmarks are running (${others.join('; ')}): figures may be off`);
  const fake = await startFake();
  const work = mkdtempSync(join(tmpdir(), 'cns-bench-google-drive-'));
  const rows: [string, string, string, boolean][] = [];
  let service: BenchServer | null = null;
  try {
    const t0 = performance.now();
    const ids = populate(fake.model);
    console.log(`${FILES} files in ${FOLDERS} folders generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    service = await startBenchServer(join(work, 'data'), {
      CNS_GOOGLE_DRIVE_API_URL: fake.url,
      CNS_OAUTH_GOOGLE_CLIENT_ID: GOOGLE_APP.id,
      CNS_OAUTH_GOOGLE_CLIENT_SECRET: GOOGLE_APP.secret,
      // The fake listens on loopback, which the outbound guard refuses unless told otherwise.
      CNS_URL_FETCH_ALLOW_PRIVATE: '1',
      NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', googlePreload(fake.url)].join(' ').trim(),
    });
    const { token, projectId } = await benchProject(service.url);
    const call = (method: string, path: string, body?: unknown) => api(service!.url, method, path, token, body);
    await connect(service.url, call, projectId);
    const { sync } = (await call('POST', '/sync/bootstrap', { project_id: projectId, provider: 'google-drive', config: { path: '/drive', folder_id: ROOT } })) as { sync: { id: string } };
    const refresh = async (): Promise<Run> => {
      let run = ((await call('POST', `/sync/syncs/${sync.id}/refresh`)) as { run: Run }).run;
      const deadline = Date.now() + RUN_DEADLINE_MS;
      while (run.status === 'queued' || run.status === 'running') {
        if (Date.now() > deadline) throw new Error(`run ${run.id} still ${run.status} after ${RUN_DEADLINE_MS / 1000} s`);
        await delay(200);
        run = (await call('GET', `/sync/runs/${run.id}`)) as Run;
      }
      if (run.status !== 'succeeded') throw new Error(`run ${run.id} ${run.status}: ${run.error ?? run.errors.join('; ')}`);
      return run;
    };
    const cpu = cpuClock(service.child.pid!);

    fake.reset();
    let cpu0 = cpu();
    const first = await refresh();
    const s1 = fake.stats();
    const firstMs = runMs(first);
    const own = firstMs - s1.handlingMs;
    const items = first.pulled.created;
    console.log(
      `first pull: ${items} items in ${(firstMs / 1000).toFixed(1)} s, ${first.http_calls} HTTP calls (the fake saw ${s1.requests}: ${JSON.stringify(s1.byRoute)}), ` +
        `the fake answering ${(s1.handlingMs / 1000).toFixed(2)} s, service CPU ${(cpu() - cpu0).toFixed(1)} s`,
    );
    rows.push(['1. first pull, own throughput', `${(items / (own / 1000)).toFixed(0)} items/s (${items} items, ${(own / 1000).toFixed(1)} s own of ${(firstMs / 1000).toFixed(1)} s)`, `>= ${TARGET_ITEMS_PER_S} items/s`, items === FILES && items / (own / 1000) >= TARGET_ITEMS_PER_S]);

    // Spread over the folder, and over the kinds (Docs, Sheets, plain files follow each other).
    const changed = Array.from({ length: Math.min(CHANGED, ids.length) }, (_, i) => ids[(Math.floor((i * ids.length) / CHANGED) + i) % ids.length]!);
    for (const id of changed) {
      const f = fake.model.files.get(id)!;
      fake.model.edit(id, `${f.mimeType === SHEET ? 'Name,Count\nedited,1' : '# edited'}\n${Date.now()}\n`);
    }
    fake.reset();
    cpu0 = cpu();
    const inc = await refresh();
    const s2 = fake.stats();
    const incMs = runMs(inc);
    const incOwn = incMs - s2.handlingMs;
    const beyond = inc.http_calls - changed.length;
    console.log(`incremental: pulled ${JSON.stringify(inc.pulled)}, ${inc.http_calls} HTTP calls (${JSON.stringify(s2.byRoute)}), ${incMs} ms run, the fake answering ${s2.handlingMs.toFixed(1)} ms, service CPU ${((cpu() - cpu0) * 1000).toFixed(0)} ms`);
    rows.push([
      '2. incremental, calls beyond the changed items',
      `${beyond} (${inc.http_calls} calls − ${changed.length} changed files)`,
      `< ${TARGET_EXTRA_CALLS}`,
      beyond < TARGET_EXTRA_CALLS && inc.pulled.updated === changed.length && inc.pulled.created === 0 && inc.pulled.deleted === 0,
    ]);
    rows.push(['2. incremental, own time', `${incOwn.toFixed(0)} ms (${incMs} ms run − ${s2.handlingMs.toFixed(0)} ms in the fake)`, `< ${TARGET_INCREMENTAL_MS} ms`, incOwn < TARGET_INCREMENTAL_MS]);
  } finally {
    await service?.stop();
    await fake.close();
    if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
    else console.log(`data kept in ${work}`);
  }
  console.log('\n' + table(rows));
  if (rows.length === 0 || rows.some((r) => !r[3])) process.exitCode = 1;
}

/**
 * Connects the project to Google Drive as a person would: the authorization URL from the
 * service, then the browser's return to the callback with a code, which the service exchanges
 * at (the fake's) token endpoint.
 */
async function connect(serviceUrl: string, call: (method: string, path: string, body?: unknown) => Promise<unknown>, projectId: string): Promise<void> {
  const { authorization_url } = (await call('GET', `/oauth/google-drive/authorize?project_id=${projectId}`)) as { authorization_url: string };
  const auth = new URL(authorization_url);
  // The callback address names the service's public URL; the path and query are what matter here.
  const back = new URL(auth.searchParams.get('redirect_uri')!);
  const callback = new URL(back.pathname, serviceUrl);
  callback.searchParams.set('code', '4/0Abench-code');
  callback.searchParams.set('state', auth.searchParams.get('state')!);
  const res = await fetch(callback, { redirect: 'manual' });
  if (res.status >= 400) throw new Error(`OAuth callback: ${res.status} ${await res.text()}`);
  const status = (await call('GET', `/oauth/google-drive/status?project_id=${projectId}`)) as { connected: boolean; needs_reauth: boolean };
  if (!status.connected || status.needs_reauth) throw new Error(`google-drive not connected: ${JSON.stringify(status)}`);
}

/** Other benchmark processes on the machine (their load would skew the figures). */
function busyBenches(): string[] {
  const found: string[] = [];
  for (const pid of existsSync('/proc') ? readdirProc() : []) {
    if (pid === String(process.pid) || pid === String(process.ppid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (/scripts\/bench-/.test(cmd) && !cmd.includes('bench-google-drive')) found.push(`${pid}: ${cmd.trim().slice(0, 80)}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

function readdirProc(): string[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n));
}

function cpuClock(pid: number): () => number {
  const file = `/proc/${pid}/stat`;
  return () => {
    if (!existsSync(file)) return NaN;
    // utime and stime are the 12th and 13th fields after the command name, in ticks of 1/100 s.
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
}

function table(rows: [string, string, string, boolean][]): string {
  const head = ['figure', 'measured', 'target', 'result'];
  const body = rows.map(([f, m, t, p]) => [f, m, t, p ? 'PASS' : 'FAIL']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

await bench();
