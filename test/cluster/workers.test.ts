import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { request, type Agent } from 'node:http';
import { join } from 'node:path';
import { GitClient } from '../git/gitFixture.ts';
import { ownerOf as leaseHolder, startWorkers, type WorkersServer } from './workersHarness.ts';

// `cns serve --workers 2` as a user runs it: a primary and two worker processes on one data folder.
let w: WorkersServer;
let token: string;
test.before(async () => {
  w = await startWorkers(2);
  token = await w.token();
});
test.after.always(async () => {
  await w?.stop();
});

const ownerOf = (projectId: string) => leaseHolder(w.dataDir, projectId);
const other = (name: string) => (name === 'w1' ? 'w2' : 'w1');
const write = (projectId: string, path: string, content: string, agent?: Agent) =>
  w.api('POST', `/content/${projectId}/write`, { token, agent, body: { path, content, node_type: 'markdown' } });

test.serial('/healthz names both workers, and new connections are served by both', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 6; i++) seen.add((await w.health()).worker);
  t.deepEqual([...seen].sort(), ['w1', 'w2']);
  const h = await w.health();
  t.deepEqual(h.workers.map((x) => x.name), ['w1', 'w2']);
  t.true(h.workers.every((x) => x.pid > 0 && x.restarts === 0));
  // Each worker's share of the projects: a written project counts for the worker holding its lease.
  const projectId = await w.project(token, 'healthz share');
  t.is((await write(projectId, 'a.md', 'a')).status, 201);
  const after = await w.health();
  const share = (name: string, x = after) => x.workers.find((m) => m.name === name)!.projects;
  const owner = ownerOf(projectId)!;
  t.is(share(owner), share(owner, h) + 1);
  t.is(share(other(owner)), share(other(owner), h));
});

test.serial('writes to one project through connections on both workers stay linear: no lost update, contiguous versions', async (t) => {
  const projectId = await w.project(token, 'linear');
  t.is((await write(projectId, 'first.md', 'first')).status, 201);
  const owner = ownerOf(projectId)!;
  t.truthy(owner);
  // Keep-alive connections bound to each worker: those on the other one are forwarded to the owner.
  const agents = [await w.connectionTo('w1'), await w.connectionTo('w2'), await w.connectionTo('w1'), await w.connectionTo('w2')];
  t.teardown(() => agents.forEach((a) => a.destroy()));
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => write(projectId, 'shared.md', `edit ${i}`, agents[i % agents.length])));
  t.deepEqual(answers.map((a) => a.status).filter((s) => s !== 200 && s !== 201), []);
  const versions = answers.map((a) => a.body.data.project_version as number).sort((a, b) => a - b);
  t.deepEqual(versions, Array.from({ length: 40 }, (_, i) => i + 2), 'each write got its own project version, none skipped');
  const history = await w.api('GET', `/content/${projectId}/versions?path=shared.md&limit=100`, { token });
  t.is(history.status, 200);
  t.is(history.body.data.total, 40, 'every acknowledged write is a version of the file');
  t.is(ownerOf(projectId), owner, 'the lease did not move');
});

test.serial('changes that name their project only in the body or through a record id run on the owner too', async (t) => {
  const projectId = await w.project(token, 'by body');
  t.is((await write(projectId, 'seed.md', 'seed')).status, 201);
  const elsewhere = await w.connectionTo(other(ownerOf(projectId)!));
  t.teardown(() => elsewhere.destroy());
  const created = await w.api('POST', '/nodes/markdown', { token, agent: elsewhere, body: { project_id: projectId, name: 'by-body.md', content: 'one' } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const nodeId = created.body.data.id as string;
  const updated = await w.api('PUT', `/nodes/${nodeId}`, { token, agent: elsewhere, body: { content: 'two' } });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  const read = await w.api('GET', `/content/${projectId}/cat?path=by-body.md`, { token, agent: elsewhere });
  t.is(read.body.data.content, 'two');
  const versions = await w.api('GET', `/content/${projectId}/versions?limit=10`, { token });
  t.deepEqual(versions.body.data.commits.map((c: { version: number }) => c.version), [3, 2, 1]);
});

test.serial('a large body sent with its head in the first packets reaches the worker whole (the primary reads only the request line)', async (t) => {
  const projectId = await w.project(token, 'large');
  const content = 'x'.repeat(3 * 1024 * 1024);
  // node:http sends the head and the start of the body together: the primary must not keep any of it.
  const res = await write(projectId, 'large.md', content);
  t.is(res.status, 201, JSON.stringify(res.body).slice(0, 300));
  const read = await w.api('GET', `/content/${projectId}/cat?path=large.md`, { token });
  t.is(read.body.data.content.length, content.length);
});

/** The bytes of a GET on `agent`'s connection (one worker), with the answer's status. */
function bytesVia(url: string, agent: Agent): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

test.serial('an upload streams through its address to the owner, and downloads whole through either worker', async (t) => {
  const projectId = await w.project(token, 'upload');
  const size = 12 * 1024 * 1024;
  const bytes = randomBytes(size);
  const up = await w.api('POST', '/nodes/upload', { token, body: { project_id: projectId, name: 'big.bin', size } });
  t.truthy(up.body.data?.upload_url, JSON.stringify(up.body));
  const local = (url: string) => url.replace(/^http:\/\/[^/]+/, w.url);
  const put = await fetch(local(up.body.data.upload_url), { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
  t.is(put.status, 201, await put.clone().text());
  t.is(((await put.json()) as { data: { size: number } }).data.size, size);
  const digest = createHash('sha256').update(bytes).digest('hex');
  for (const name of ['w1', 'w2']) {
    const via = await w.connectionTo(name);
    t.teardown(() => via.destroy());
    const dl = await w.api('GET', `/nodes/${up.body.data.node_id}/download`, { token, agent: via });
    const got = await bytesVia(local(dl.body.data.download_url), via);
    t.is(got.status, 200, name);
    t.is(createHash('sha256').update(got.body).digest('hex'), digest, `the bytes read through ${name}`);
  }
});

test.serial('read your writes: a write acknowledged through one worker is read back at once through the other', async (t) => {
  const projectId = await w.project(token, 'ryw');
  t.is((await write(projectId, 'ryw.md', 'v0')).status, 201);
  const a = await w.connectionTo('w1');
  const b = await w.connectionTo('w2');
  t.teardown(() => [a, b].forEach((x) => x.destroy()));
  for (let i = 1; i <= 20; i++) {
    const [via, readVia] = i % 2 ? [a, b] : [b, a];
    const res = await write(projectId, 'ryw.md', `v${i}`, via);
    t.is(res.status, 200);
    const read = await w.api('GET', `/content/${projectId}/cat?path=ryw.md`, { token, agent: readVia });
    t.is(read.body.data.content, `v${i}`, `round ${i}`);
  }
});

test.serial('the live feed on either worker receives the commits written on the other', async (t) => {
  const projectId = await w.project(token, 'feed');
  t.is((await write(projectId, 'start.md', 'x')).status, 201);
  const owner = ownerOf(projectId)!;
  const streams = await Promise.all(['w1', 'w2'].map((name) => openFeed(name, projectId)));
  t.teardown(() => streams.forEach((s) => s.close()));
  const res = await write(projectId, 'news.md', 'hello');
  const pv = res.body.data.project_version as number;
  for (const s of streams) {
    const text = await s.until(new RegExp(`id: ${pv}\\n`));
    t.regex(text, /news\.md/, `the stream on ${s.worker} (owner ${owner})`);
  }
});

test.serial('git: a push through one worker and a clone through the other', async (t) => {
  const projectId = await w.project(token, 'git');
  t.is((await write(projectId, 'README.md', '# git\n')).status, 201);
  const git = new GitClient();
  t.teardown(() => git.dispose());
  const remote = `${w.url.replace('://', `://cns:${token}@`)}/git/${projectId}.git`;
  const dir = git.dir('work');
  await git.ok(['clone', remote, dir]);
  for (let i = 0; i < 3; i++) {
    await git.ok(['-C', dir, 'commit', '--allow-empty', '-m', `empty ${i}`]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, `pushed-${i}.md`), `push ${i}\n`);
    await git.ok(['-C', dir, 'add', '.']);
    await git.ok(['-C', dir, 'commit', '-m', `push ${i}`]);
    await git.ok(['-C', dir, 'push', 'origin', 'HEAD:main']);
  }
  const read = await w.api('GET', `/content/${projectId}/cat?path=pushed-2.md`, { token });
  t.is(read.body.data.content, 'push 2\n');
  const again = git.dir('again');
  await git.ok(['clone', remote, again]);
  t.regex(await git.ok(['-C', again, 'log', '--oneline']), /push 2/);
});

/** An event stream held on a connection served by `worker`. */
async function openFeed(worker: string, projectId: string): Promise<{ worker: string; until(re: RegExp): Promise<string>; close(): void }> {
  const agent = await w.connectionTo(worker);
  let text = '';
  const waiters = new Set<() => void>();
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  const req = request(`${w.url}/api/v1/events?project_id=${projectId}`, { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
    opened();
    res.on('data', (c: Buffer) => {
      text += c.toString();
      for (const f of waiters) f();
    });
  });
  req.end();
  // The stream is subscribed once its answer has begun: a commit before that is not its to see.
  await open;
  return {
    worker,
    until: (re) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} on ${worker}: ${text}`)), 20_000);
        const check = () => {
          if (!re.test(text)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(text);
        };
        waiters.add(check);
        check();
      }),
    close: () => {
      req.destroy();
      agent.destroy();
    },
  };
}
