import test from 'ava';
import { contentApi, createKey, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// Blame through HTTP: which version (person or agent) last changed each line or JSON key.
let server: TestServer;
let token: string;
let orgId: string;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  orgId = (await defaultProject(server, token)).orgId;
});
test.after.always(() => server.stop());

async function freshProject(name: string): Promise<{ pid: string; c: ContentCall }> {
  const pid = await createProject(server, token, orgId, name);
  return { pid, c: contentApi(server, token, pid) };
}

interface Blame {
  version: number;
  line_count: number;
  ranges: { start_line: number; end_line: number; commit_id: string }[];
  commits: { commit_id: string; version: number | null; project_version: number | null; actor_type: string; actor_id: string; author: string; message: string; created_at: string }[];
  keys: { pointer: string; commit_id: string }[] | null;
}

/** Each line's node version and actor type, from the answer's ranges and commits. */
function perLine(b: Blame): { version: number | null; actor: string; message: string }[] {
  const byId = new Map(b.commits.map((c) => [c.commit_id, c]));
  const out: { version: number | null; actor: string; message: string }[] = [];
  for (const r of b.ranges) {
    for (let l = r.start_line; l <= r.end_line; l++) {
      const c = byId.get(r.commit_id)!;
      out[l - 1] = { version: c.version, actor: c.actor_type, message: c.message };
    }
  }
  return out;
}

const md = (path: string, content: string, message: string) => ({ path, content, node_type: 'markdown', message });

test('each line names the version that last changed it, a person or an agent, by path and by node id', async (t) => {
  const { pid, c } = await freshProject('blame-lines');
  const { key } = await createKey(server, token, pid, { name: 'editor-bot' });
  const bot = (method: string, route: string, body?: unknown) => server.api(method, `/content/${pid}${route}`, { token: key, body });
  await c('POST', '/write', md('doc.md', 'one\ntwo\nthree\n', 'first draft'));
  t.is((await bot('POST', '/write', md('doc.md', 'one\nTWO by bot\nthree\nfour\n', 'bot edits'))).status, 200);
  await c('POST', '/write', md('doc.md', 'zero\none\nTWO by bot\nthree\nfour\n', 'person prepends'));

  const res = await c('GET', '/blame?path=doc.md');
  t.is(res.status, 200, JSON.stringify(res.body));
  const b = res.body.data as Blame;
  t.is(b.version, 3);
  t.is(b.line_count, 5);
  t.deepEqual(
    perLine(b).map((l) => [l.version, l.actor]),
    [
      [3, 'user'],
      [1, 'user'],
      [2, 'agent'],
      [1, 'user'],
      [2, 'agent'],
    ],
  );
  t.is(perLine(b)[2]!.message, 'bot edits');
  const botCommit = b.commits.find((x) => x.actor_type === 'agent')!;
  t.is(botCommit.author, 'agent:editor-bot');
  t.truthy(Date.parse(botCommit.created_at));
  t.deepEqual(b.commits.map((x) => x.version), [3, 2, 1], 'commits newest first');

  // The same answer by node id, and a version in the past.
  const id = (await c('GET', '/stat?path=doc.md')).body.data.id;
  const byId = await server.api('GET', `/nodes/${id}/blame`, { token });
  t.is(byId.status, 200);
  t.deepEqual(byId.body.data, b);
  const past = (await server.api('GET', `/nodes/${id}/blame?version=2`, { token })).body.data as Blame;
  t.is(past.version, 2);
  t.deepEqual(perLine(past).map((l) => l.version), [1, 2, 1, 2]);
});

test('renames and moves through the trash are followed: lines keep their first version', async (t) => {
  const { c } = await freshProject('blame-moves');
  await c('POST', '/write', md('a.md', 'alpha\nbeta\n', 'create'));
  await c('POST', '/mv', { old_path: 'a.md', new_path: 'notes/b.md' });
  const removed = (await c('POST', '/rm', { path: 'notes/b.md' })).body.data;
  const restored = await c('POST', '/restore', { trash_path: removed.trash_path, original_path: 'notes/b.md' });
  t.true(restored.status < 300, JSON.stringify(restored.body));
  await c('POST', '/write', md('notes/b.md', 'alpha\nbeta\ngamma\n', 'append'));
  const b = (await c('GET', '/blame?path=notes/b.md')).body.data as Blame;
  const lines = perLine(b);
  t.is(lines.length, 3);
  t.is(lines[0]!.message, 'create');
  t.is(lines[0]!.version, 1);
  t.is(lines[2]!.message, 'append');
  t.is(lines[2]!.version, b.version);
});

test('JSON answers each key path with the version that last changed it', async (t) => {
  const { c } = await freshProject('blame-json');
  await c('POST', '/write', { path: 'cfg.json', content: { name: 'x', limits: { cpu: 1, mem: 2 }, tags: [] }, node_type: 'json', message: 'v1' });
  await c('POST', '/write', { path: 'cfg.json', content: { name: 'x', limits: { cpu: 4, mem: 2 }, tags: ['a'] }, node_type: 'json', message: 'v2' });
  const b = (await c('GET', '/blame?path=cfg.json')).body.data as Blame;
  const version = new Map(b.commits.map((x) => [x.commit_id, x.version]));
  const keys = Object.fromEntries(b.keys!.map((k) => [k.pointer, version.get(k.commit_id)]));
  t.deepEqual(keys, { '/name': 1, '/limits/cpu': 2, '/limits/mem': 1, '/tags/0': 2 });
});

test('blame is incremental after a new version and agrees with a cold computation', async (t) => {
  const { pid, c } = await freshProject('blame-incremental');
  let text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n') + '\n';
  await c('POST', '/write', md('big.md', text, 'v1'));
  const answers: Blame[] = [];
  for (let v = 2; v <= 6; v++) {
    const lines = text.split('\n');
    lines.splice(v * 7, 1, `edited in ${v}`);
    lines.splice(v, 0, `inserted in ${v}`);
    text = lines.join('\n');
    await c('POST', '/write', md('big.md', text, `v${v}`));
    // Asked after every version: each answer after the first builds on the one before.
    answers.push((await c('GET', '/blame?path=big.md')).body.data as Blame);
  }
  // A second server on the same data has no cache: its answer is git blame's own.
  const cold = await startTestServer({ dataDir: server.dataDir });
  try {
    const login = (await cold.login()).token;
    const fresh = (await cold.api('GET', `/content/${pid}/blame?path=big.md`, { token: login })).body.data as Blame;
    t.deepEqual(perLine(fresh), perLine(answers[answers.length - 1]!));
    t.is(fresh.line_count, text.split('\n').length - 1);
  } finally {
    await cold.stop();
  }
});

test('folders, binary files, unknown versions and paths outside a key scope are refused', async (t) => {
  const { pid, c } = await freshProject('blame-refusals');
  await c('POST', '/bulk-write', {
    files: [
      { path: 'inside/a.md', content: 'a', node_type: 'markdown' },
      { path: 'outside/b.md', content: 'b', node_type: 'markdown' },
    ],
  });
  const bin = await c('POST', '/write', { path: 'inside/blob.bin', content: Buffer.from([0, 1, 2, 0, 255]).toString('base64'), node_type: 'file' });
  t.true(bin.status < 300, JSON.stringify(bin.body));
  t.is((await c('GET', '/blame?path=inside')).status, 422);
  t.is((await c('GET', '/blame?path=inside/blob.bin')).status, 422);
  t.is((await c('GET', '/blame?path=inside/a.md&version=9')).status, 404);
  t.is((await c('GET', '/blame?path=nope.md')).status, 404);
  t.is((await c('GET', '/blame')).status, 422);
  const { key } = await createKey(server, token, pid, { scope_path: 'inside', mode: 'read' });
  const scoped = (p: string) => server.api('GET', `/content/${pid}/blame?path=${p}`, { token: key });
  t.is((await scoped('inside/a.md')).status, 200);
  t.is((await scoped('outside/b.md')).status, 403);
  const outsideId = (await c('GET', '/stat?path=outside/b.md')).body.data.id;
  const byId = await server.api('GET', `/nodes/${outsideId}/blame`, { token: key });
  t.true(byId.status === 403 || byId.status === 404, String(byId.status));
});

test('checkpoints: every Nth version is kept as it is written, and a later version is blamed from the last one, after a restart and a purge too', async (t) => {
  const every = 5;
  const dataDir = (await import('node:fs')).mkdtempSync((await import('node:path')).join((await import('node:os')).tmpdir(), 'cns-blame-'));
  const first = await startTestServer({ dataDir }, { CNS_BLAME_CHECKPOINT_EVERY: String(every) });
  let pid: string;
  try {
    const tk = (await first.login()).token;
    pid = (await defaultProject(first, tk)).projectId;
    let lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    for (let v = 1; v <= 12; v++) {
      if (v > 1) lines = lines.map((l, i) => (i % 7 === v % 7 ? `${l} v${v}` : l));
      if (v === 6) lines.splice(3, 0, 'inserted at 6');
      await first.api('POST', `/content/${pid}/write`, { token: tk, body: { path: 'doc.md', node_type: 'markdown', content: lines.join('\n') + '\n', message: `v${v}` } });
    }
    await first.api('POST', `/content/${pid}/write`, { token: tk, body: { path: 'secret.txt', node_type: 'file', content: Buffer.from('leaked').toString('base64') } });
    const deadline = Date.now() + 20_000;
    const kept = () => first.services.db.prepare(`SELECT version FROM blame_checkpoints WHERE project_id = ? ORDER BY version`).all(pid) as { version: number }[];
    while ((first.services.content.blameCheckpointsPending > 0 || kept().length < 2) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    t.deepEqual(kept().map((r) => r.version), [5, 10], 'made in the background as the versions were written');
  } finally {
    await first.stop();
  }

  // A new process: nothing in memory; versions 12 and 7 come from the checkpoints 10 and 5.
  const second = await startTestServer({ dataDir }, { CNS_BLAME_CHECKPOINT_EVERY: String(every) });
  const walked = await startTestServer({ dataDir }, { CNS_BLAME_CHECKPOINT_EVERY: '0' });
  try {
    const tk = (await second.login()).token;
    const tk2 = (await walked.login()).token;
    for (const version of [12, 7, 10]) {
      const fromCheckpoint = (await second.api('GET', `/content/${pid!}/blame?path=doc.md&version=${version}`, { token: tk })).body.data as Blame;
      const fromWalk = (await walked.api('GET', `/content/${pid!}/blame?path=doc.md&version=${version}`, { token: tk2 })).body.data as Blame;
      t.deepEqual(perLine(fromCheckpoint), perLine(fromWalk), `version ${version}`);
      if (version === 7) t.is(perLine(fromCheckpoint)[3]!.version, 6, 'the line inserted at 6, after the checkpoint at 5');
    }
    // A purge rewrites the commits: the checkpoints go, and answers stay right.
    t.is((await second.api('POST', `/projects/${pid!}/purge`, { token: tk, body: { path: 'secret.txt' } })).status, 200);
    t.is((second.services.db.prepare(`SELECT COUNT(*) AS n FROM blame_checkpoints WHERE project_id = ?`).get(pid!) as { n: number }).n, 0);
    const after = (await second.api('GET', `/content/${pid!}/blame?path=doc.md`, { token: tk })).body.data as Blame;
    t.deepEqual(
      perLine(after).map((l) => l.version),
      perLine((await walked.api('GET', `/content/${pid!}/blame?path=doc.md`, { token: tk2 })).body.data as Blame).map((l) => l.version),
    );
  } finally {
    await second.stop();
    await walked.stop();
  }
});
