import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { contentApi, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { leavesNoHostMounts } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

// Warm sandboxes through HTTP: made after a command that left the commit as it was, taken by
// the next command with the same key, never used across a new commit.

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
let workId: string;

test.before(async () => {
  server = await startTestServer({}, { CNS_SANDBOX: 'bwrap' });
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  const files = Array.from({ length: 40 }, (_, i) => ({ path: `work/d${i % 4}/note-${i}.md`, node_type: 'markdown', content: `note ${i}\n` }));
  await c('POST', '/bulk-write', { files });
  workId = server.services.content.findByPath(projectId, 'work')!.id;
});

test.after.always(async (t) => {
  const sandboxDir = server?.services.settings.sandboxDir;
  await server?.stop();
  if (!sandboxDir) return;
  t.deepEqual(await processesMentioning(sandboxDir), [], 'closing the server cancelled every warm sandbox');
  t.deepEqual(await ownCgroups(), [], 'and removed every cgroup');
});

const executor = () => server.services.sandbox.executor;
const warm = () => executor().warmSandboxes!;

async function endpoint(body: Record<string, unknown> = {}) {
  const r = await server.api('POST', '/sandbox-endpoints/', { token, body: { name: 'warm', project_id: projectId, node_id: workId, ...body } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.data.sandbox_endpoint.id as string, key: r.body.data.key as string };
}

async function exec(e: { id: string; key: string }, command: string) {
  const r = await server.api('POST', `/sandbox-endpoints/${e.id}/exec`, { token: e.key, body: { command } });
  if (r.status !== 200) throw new Error(`exec failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { stdout: string; stderr: string; exit_code: number; version: number | null; conflicts: unknown[]; timings: { warm: boolean; materialize_ms: number } };
}

/** Polls until `check` holds (10 ms steps) or the deadline passes. */
async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not before the deadline`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits for the warm sandboxes being made; `count` of them are there, ready to be taken. */
async function warmed(count = 1): Promise<void> {
  await warm().settled();
  if (warm().size !== count) throw new Error(`${warm().size} warm sandboxes, not ${count}`);
}

async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ').slice(0, 120)}`);
  }
  return found;
}

async function ownCgroups(): Promise<string[]> {
  const found: string[] = [];
  for (const root of ['/sys/fs/cgroup/memory', '/sys/fs/cgroup/pids', '/sys/fs/cgroup']) {
    for (const name of await readdir(root).catch(() => [] as string[])) if (name.startsWith(`cns-sbx-${process.pid}-`)) found.push(`${root}/${name}`);
  }
  return found;
}

test.serial('a second ls on the same endpoint runs warm and gives the same result', async (t) => {
  const e = await endpoint();
  const command = 'ls -R | sort; echo "pid 1 is $(cat /proc/1/comm)"';
  const cold = await exec(e, command);
  t.false(cold.timings.warm);
  await warmed();
  const hot = await exec(e, command);
  t.true(hot.timings.warm, 'the sandbox made after the first command ran the second');
  t.is(hot.stdout, cold.stdout);
  t.is(hot.exit_code, 0);
  t.is(hot.stderr, cold.stderr);
  t.is(hot.version, null);
  t.regex(hot.stdout, /note-39\.md/);
  // Taken, and made again after the command: one per key.
  await warmed();
  const third = await exec(e, command);
  t.true(third.timings.warm);
  t.is(third.stdout, cold.stdout);
  // Another key (mode read: a read-only folder) does not take it.
  const reader = await endpoint({ name: 'reader', mode: 'read' });
  await warmed();
  const read = await exec(reader, 'ls d0 | wc -l; touch x 2>&1 | grep -c Read-only');
  t.false(read.timings.warm);
  t.is(read.stdout, '10\n1\n');
  await warmed(2);
  t.true((await exec(reader, 'ls d0 | wc -l')).timings.warm, 'the reader has its own');
});

test.serial('a write in between makes the next run cold (new commit) and correct', async (t) => {
  const e = await endpoint({ name: 'writer' });
  await exec(e, 'true');
  await warm().settled();
  await c('POST', '/write', { path: 'work/added.md', node_type: 'markdown', content: 'added meanwhile\n' });
  await until(() => warm().size === 0, 'the commit cancelled the warm sandboxes of the project');
  const after = await exec(e, 'cat added.md');
  t.false(after.timings.warm, 'not at the new head: cold');
  t.is(after.stdout, 'added meanwhile\n');
  // A command that writes takes the warm sandbox; its own commit makes the next one cold.
  await warmed();
  const writes = await exec(e, 'echo made > made.md; cat added.md');
  t.true(writes.timings.warm);
  t.is(writes.stdout, 'added meanwhile\n');
  t.not(writes.version, null);
  await warm().settled();
  t.is(warm().size, 0, 'no sandbox is made at the commit the write left behind');
  const next = await exec(e, 'cat made.md added.md');
  t.false(next.timings.warm);
  t.is(next.stdout, 'made\nadded meanwhile\n');
  t.is((await c('GET', '/cat?path=work/made.md')).body.data.content, 'made\n');
});

test.serial('16 concurrent execs on one endpoint all succeed: one may run warm, the others run cold', async (t) => {
  const e = await endpoint({ name: 'burst' });
  await exec(e, 'true');
  await warmed();
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) => exec(e, `echo "run ${i}" > run-${i}.md && cat run-${i}.md`)));
  results.forEach((d, i) => {
    t.is(d.exit_code, 0, d.stderr);
    t.is(d.stdout, `run ${i}\n`);
    t.not(d.version, null);
    t.deepEqual(d.conflicts, []);
  });
  t.is(results.filter((d) => d.timings.warm).length, 1, 'the one warm sandbox went to one of them');
  for (let i = 0; i < 16; i++) t.is((await c('GET', `/cat?path=work/run-${i}.md`)).body.data.content, `run ${i}\n`);
  const all = await exec(e, 'cat run-*.md | wc -l');
  t.is(all.stdout, '16\n');
});
