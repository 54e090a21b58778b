/**
 * Issue 31, the riskiest figure first: what one round of replication costs a write, by two
 * transports, measured in the same run on the same commits (docs/design/cluster.md §5).
 *
 *   git push   `git push --atomic --force-with-lease` of `main` to a replica over smart HTTP,
 *              served by `git http-backend` (what a push to `cns` runs today): spawns git on both sides.
 *   pack ship  the pack and index the primary already wrote for the batch, POSTed to the replica,
 *              which writes both files and moves `main` by compare-and-swap: no process spawned.
 *
 * Each round makes one commit on the primary (outside the timing), then replicates it to two
 * replicas in parallel, as a quorum write of R = 3 would, once by each transport.
 *
 *   node --import=tsx scripts/bench-replication-transport.ts [rounds]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, Agent, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { casMainRef, readMainRef } from '../src/content/git/refs.ts';

const rounds = Number(process.argv[2] ?? 60);
const root = mkdtempSync(join(tmpdir(), 'cns-bench-repl-'));
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

// A primary with a 500-file project, and two replicas of each transport cloned from it.
const work = join(root, 'work');
git(root, 'init', '-q', '-b', 'main', work);
for (let i = 0; i < 500; i++) writeFileSync(join(work, `f${i}.md`), `# file ${i}\n${'text '.repeat(40)}\n`);
git(work, 'add', '.');
git(work, '-c', 'user.email=b@cns', '-c', 'user.name=bench', 'commit', '-qm', 'seed');
const primary = join(root, 'primary.git');
git(root, 'clone', '-q', '--bare', work, primary);
const replicas = { push: ['p1', 'p2'], ship: ['s1', 's2'] };
for (const r of [...replicas.push, ...replicas.ship]) {
  git(root, 'clone', '-q', '--bare', primary, join(root, `${r}.git`));
  git(join(root, `${r}.git`), 'config', 'http.receivepack', 'true');
}

/** The replica side of both transports. */
const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://x');
  if (url.pathname.startsWith('/ship/')) return void receiveShipment(url.pathname.slice(6), req).then((status) => res.writeHead(status).end(), () => res.writeHead(500).end());
  // git http-backend as a CGI, as src/remote/httpBackend.ts runs it.
  const env = { ...process.env, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REMOTE_USER: 'bench', PATH_INFO: url.pathname, QUERY_STRING: url.search.slice(1), REQUEST_METHOD: req.method!, CONTENT_TYPE: req.headers['content-type'] ?? '', CONTENT_LENGTH: req.headers['content-length'] ?? '', HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '' };
  const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on('data', (c: Buffer) => {
    if (started) return void res.write(c);
    head = Buffer.concat([head, c]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString().split('\r\n')) {
      const [k, ...v] = line.split(':');
      if (k!.toLowerCase() === 'status') status = Number.parseInt(v.join(':'), 10);
      else res.setHeader(k!, v.join(':').trim());
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  cgi.stdout.on('end', () => res.end());
});

/** Body: 4-byte length of a JSON header {old, next, pack}, the header, the pack, then the idx. */
async function receiveShipment(name: string, req: IncomingMessage): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const len = body.readUInt32BE(0);
  const h = JSON.parse(body.subarray(4, 4 + len).toString()) as { old: string; next: string; pack: string; packBytes: number };
  const gitdir = join(root, `${name}.git`);
  const dir = join(gitdir, 'objects', 'pack');
  const pack = body.subarray(4 + len, 4 + len + h.packBytes);
  const idx = body.subarray(4 + len + h.packBytes);
  // The idx last, as git does: a reader that finds the idx finds a whole pack.
  writeFileSync(join(dir, `tmp-${h.pack}.pack`), pack);
  renameSync(join(dir, `tmp-${h.pack}.pack`), join(dir, `${h.pack}.pack`));
  writeFileSync(join(dir, `tmp-${h.pack}.idx`), idx);
  renameSync(join(dir, `tmp-${h.pack}.idx`), join(dir, `${h.pack}.idx`));
  return casMainRef(gitdir, h.old, h.next, false) === 'ok' ? 200 : 409;
}

await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
const agent = new Agent({ keepAlive: true });

const timings = { push: [] as number[], ship: [] as number[] };
for (let i = 0; i < rounds; i++) {
  // One write: a changed file, committed and pushed to the primary (not timed).
  writeFileSync(join(work, `f${i % 500}.md`), `# file ${i}\nround ${i} ${Math.random()}\n`);
  git(work, '-c', 'user.email=b@cns', '-c', 'user.name=bench', 'commit', '-qam', `round ${i}`);
  const old = readMainRef(primary)!;
  git(work, 'push', '-q', primary, 'main');
  const next = readMainRef(primary)!;
  // The batch's own pack, as the content core writes it per batch (not timed: it exists already).
  execFileSync('git', ['pack-objects', '--revs', '-q', join(root, 'batch')], { cwd: primary, input: `${next}\n^${old}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
  const packs = readdirSync(root).filter((f) => f.startsWith('batch-') && f.endsWith('.pack'));
  // Order between the transports alternates, so that neither always runs on a warmer cache.
  const order = i % 2 === 0 ? (['push', 'ship'] as const) : (['ship', 'push'] as const);
  for (const t of order) {
    const t0 = performance.now();
    if (t === 'push') await Promise.all(replicas.push.map((r) => gitPush(r, old)));
    else await Promise.all(replicas.ship.map((r) => ship(r, old, next, packs[0]!)));
    timings[t].push(performance.now() - t0);
  }
  for (const f of readdirSync(root).filter((f) => f.startsWith('batch-'))) rmSync(join(root, f));
}

function gitPush(replica: string, old: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', primary, 'push', '-q', '--atomic', `--force-with-lease=refs/heads/main:${old}`, `http://127.0.0.1:${port}/${replica}.git`, 'refs/heads/main'], { stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git push exited ${code}`))));
  });
}

function ship(replica: string, old: string, next: string, packFile: string): Promise<void> {
  const pack = readFileSync(join(root, packFile));
  const idx = readFileSync(join(root, packFile.replace(/\.pack$/, '.idx')));
  const name = packFile.replace(/^batch-/, 'pack-').replace(/\.pack$/, '');
  const header = Buffer.from(JSON.stringify({ old, next, pack: name, packBytes: pack.length }));
  const len = Buffer.alloc(4);
  len.writeUInt32BE(header.length);
  const body = Buffer.concat([len, header, pack, idx]);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/ship/${replica}`, agent, headers: { 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`ship answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
for (const r of [...replicas.push, ...replicas.ship]) {
  if (readMainRef(join(root, `${r}.git`)) !== readMainRef(primary)) throw new Error(`replica ${r} did not reach the primary's main`);
  git(join(root, `${r}.git`), 'fsck', '--connectivity-only', '--no-progress');
}
const row = (t: 'push' | 'ship') => `${t === 'push' ? 'git push ' : 'pack ship'}  p50 ${pct(timings[t], 50).toFixed(2)} ms  p99 ${pct(timings[t], 99).toFixed(2)} ms`;
console.log(`replication of one commit to 2 replicas in parallel, ${rounds} rounds (every replica fsck'd at the end)`);
console.log(row('push'));
console.log(row('ship'));
console.log(`ratio p50 (git push / pack ship): ${(pct(timings.push, 50) / pct(timings.ship, 50)).toFixed(1)}x`);
server.close();
agent.destroy();
rmSync(root, { recursive: true, force: true });
