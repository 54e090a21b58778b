import test from 'ava';
import type { Agent } from 'node:http';
import { Receiver } from '../webhooks/receiver.ts';
import { makeZip } from '../helpers/archives.ts';
import { fetchVia } from './viaWorker.ts';
import { ownerOf as leaseHolder, startWorkers, type WorkersServer } from './workersHarness.ts';

// The surfaces added after the workers were built (archives, blame, webhooks), under
// `cns serve --workers 2`: each test talks to the worker that does NOT own the project, so its
// writes are forwarded to the owner and its background work must run there, once.

let w: WorkersServer;
let token: string;
const agents: Agent[] = [];

test.before(async () => {
  // The webhook receiver is on the loopback address, which outbound requests refuse by default.
  w = await startWorkers(2, { CNS_URL_FETCH_ALLOW_PRIVATE: 'true' });
  token = await w.token();
});

test.after.always(async () => {
  agents.forEach((a) => a.destroy());
  const code = await w?.stop();
  if (code !== 0 && w) console.error(w.serve.output());
});

/** A project with a first write (which places its lease) and connections to the owner and the other worker. */
async function placed(name: string) {
  const projectId = await w.project(token, name);
  const first = await w.api('POST', `/content/${projectId}/write`, { token, body: { path: 'seed.md', content: '# Seed\n', node_type: 'markdown' } });
  if (first.status !== 201) throw new Error(`seed write: ${first.status} ${JSON.stringify(first.body)}`);
  const owner = leaseHolder(w.dataDir, projectId);
  if (!owner) throw new Error(`no lease for ${projectId}`);
  const elsewhere = await w.connectionTo(owner === 'w1' ? 'w2' : 'w1');
  const home = await w.connectionTo(owner);
  agents.push(elsewhere, home);
  return { projectId, owner, elsewhere, home };
}

test('archives: a zip imported through the non-owner is one commit, exported back through either worker', async (t) => {
  const p = await placed('archives');
  const zip = makeZip([
    { name: 'docs/' },
    { name: 'docs/a.md', data: Buffer.from('# A\n') },
    { name: 'docs/b.json', data: Buffer.from('{"b":1}') },
    { name: 'docs/c.bin', data: Buffer.from([0, 1, 2, 3]) },
  ]);
  const form = new FormData();
  form.append('path', 'imported');
  form.append('mode', 'merge');
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'docs.zip');
  const res = await fetchVia(() => p.elsewhere)(`${w.url}/api/v1/content/${p.projectId}/import`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { data: { files: number; project_version: number; changed: boolean } };
  t.is(res.status, 200, JSON.stringify(body));
  t.like(body.data, { files: 3, changed: true, project_version: 2 }, 'one commit after the seed');

  for (const agent of [p.elsewhere, p.home]) {
    const a = await w.api('GET', `/content/${p.projectId}/cat?path=imported/docs/a.md`, { token, agent });
    t.is(a.body.data.content, '# A\n');
    const exported = await fetchVia(() => agent)(`${w.url}/api/v1/content/${p.projectId}/archive?path=imported&format=zip`, { headers: { Authorization: `Bearer ${token}` } });
    t.is(exported.status, 200);
    t.is(exported.headers.get('x-cns-project-version'), '2');
    const bytes = Buffer.from(await exported.arrayBuffer());
    t.is(bytes.readUInt32LE(0), 0x04034b50, 'a zip');
    for (const name of ['docs/a.md', 'docs/b.json', 'docs/c.bin']) t.true(bytes.includes(Buffer.from(name)), `${name} is in the export`);
  }
  t.is(leaseHolder(w.dataDir, p.projectId), p.owner, 'the lease did not move');
});

test('blame: versions written through both workers are named line by line on either', async (t) => {
  const p = await placed('blame');
  const write = (agent: Agent, content: string, message: string) =>
    w.api('POST', `/content/${p.projectId}/write`, { token, agent, body: { path: 'doc.md', content, node_type: 'markdown', message } });
  t.is((await write(p.elsewhere, 'one\ntwo\n', 'first')).status, 201);
  t.is((await write(p.home, 'one\nTWO\n', 'second')).status, 200);
  t.is((await write(p.elsewhere, 'one\nTWO\nthree\n', 'third')).status, 200);
  for (const agent of [p.elsewhere, p.home]) {
    const res = await w.api('GET', `/content/${p.projectId}/blame?path=doc.md`, { token, agent });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.data.version, 3);
    const byVersion = new Map<string, number>((res.body.data.commits as { commit_id: string; version: number }[]).map((c) => [c.commit_id, c.version]));
    const lines: (number | undefined)[] = [];
    for (const r of res.body.data.ranges as { start_line: number; end_line: number; commit_id: string }[]) {
      for (let l = r.start_line; l <= r.end_line; l++) lines[l - 1] = byVersion.get(r.commit_id);
    }
    t.deepEqual(lines, [1, 2, 3], 'each line names the version that last changed it');
  }
});

test('webhooks: each commit, whichever worker it was sent to, is delivered once', async (t) => {
  const p = await placed('webhooks');
  const receiver = await new Receiver().start();
  t.teardown(() => receiver.stop());
  const created = await w.api('POST', `/projects/${p.projectId}/webhooks`, { token, agent: p.elsewhere, body: { url: receiver.url, events: ['content.created'] } });
  t.is(created.status, 201, JSON.stringify(created.body));

  const versions: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await w.api('POST', `/content/${p.projectId}/write`, { token, agent: i % 2 ? p.home : p.elsewhere, body: { path: `n${i}.md`, content: `# ${i}\n`, node_type: 'markdown' } });
    t.is(res.status, 201, JSON.stringify(res.body));
    versions.push(res.body.data.project_version as number);
  }
  // Deliveries of one hook go in commit order: once the last is in, every earlier one is too.
  await receiver.waitFor(() => receiver.received.some((r) => r.body.commit.project_version === versions.at(-1)));
  const delivered = receiver.received.map((r) => r.body.commit.project_version as number);
  t.deepEqual(delivered, versions, 'every commit once, in order, none twice');
  t.is(new Set(receiver.received.map((r) => r.body.delivery_id)).size, receiver.received.length);
});
