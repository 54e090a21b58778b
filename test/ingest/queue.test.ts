import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openMetadataOfDataDir } from '../helpers/metadata.ts';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseOfDataDir } from '../helpers/serverDatabases.ts';
import { textPages, writePdf } from './fixtures/pdf.ts';
import { workDir } from './fixtures/workDir.ts';
import { submitFiles, waitAll, waitTask } from './ingestClient.ts';
import { html, startSite, type Site } from './site.ts';

// The queue through HTTP, on one worker so that what runs when is known: one commit per task by
// the submitter, cancelling queued and running tasks, projects taking turns, restart recovery.
const ONE_WORKER = { CNS_INGEST_WORKERS: '1', CNS_URL_FETCH_ALLOW_PRIVATE: 'true' };
const work = workDir('queue');

let server: TestServer;
let site: Site;
let token: string;
let projectId: string;
let orgId: string;
test.before(async () => {
  server = await startTestServer({}, ONE_WORKER);
  site = await startSite();
  token = (await server.login()).token;
  ({ projectId, orgId } = await defaultProject(server, token));
});
test.after.always(async () => {
  await server?.stop();
  await site?.close();
});

const commits = async (pid = projectId) => (await server.api('GET', `/content/${pid}/versions?limit=200`, { token })).body.data.commits as any[];
const taskDirs = (dir: string) => (existsSync(join(dir, 'tmp/ingest/tasks')) ? readdirSync(join(dir, 'tmp/ingest/tasks')) : []);

/** A finished task's temporary folder goes right after its status is set: poll for it, with a deadline. */
async function noTaskDirs(dir: string, ms = 30_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  while (taskDirs(dir).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return taskDirs(dir);
}

/** Submits a URL task whose page answers only when released: it holds the one worker. */
async function blocker(path: string, pid = projectId) {
  const held = site.hold(path, { body: html('held', '<p>held page</p>') });
  const res = await server.api('POST', '/ingest/submit/saas', { token, body: { project_id: pid, path: 'held', source: { type: 'url', url: `${site.url}${path}` } } });
  if (res.status !== 202) throw new Error(`blocker: ${res.status} ${JSON.stringify(res.body)}`);
  await held.requested;
  return { id: res.body.data.tasks[0].id as string, release: held.release };
}

test.serial('each task is ONE commit by its submitter, message "ingest <source>"; a key is recorded as the key', async (t) => {
  const before = (await commits()).length;
  const res = await submitFiles(server, token, { project_id: projectId, path: 'one/commit' }, [
    { name: 'notes.txt', content: 'First line\n\nSecond paragraph', type: 'text/plain' },
    { name: 'table.csv', content: 'name,qty\napple,3\npear,5\n', type: 'text/csv' },
  ]);
  t.is(res.status, 202, JSON.stringify(res.body));
  const ids = res.body.data.tasks.map((x: any) => x.id);
  t.is(ids.length, 2, 'one task per file');
  const tasks = await waitAll(server, token, ids);
  t.deepEqual(tasks.map((x) => x.status), ['succeeded', 'succeeded']);

  const { key, id: keyId } = await createKey(server, token, projectId, { scope_path: 'one', mode: 'read_write', name: 'ingester' });
  const byKey = await submitFiles(server, key, { project_id: projectId, path: 'one/by-key' }, [{ name: 'k.md', content: '# From a key\n' }]);
  t.is(byKey.status, 202, JSON.stringify(byKey.body));
  const keyTask = await waitTask(server, key, byKey.body.data.tasks[0].id);
  t.is(keyTask.status, 'succeeded', JSON.stringify(keyTask.error));
  t.is(keyTask.created_by, keyId);

  const all = await commits();
  t.is(all.length, before + 3, 'three tasks, three commits');
  const userIds = new Set([tasks[0].created_by]);
  for (const task of [...tasks, keyTask]) {
    const commit = all.find((c) => c.version === task.result.project_version);
    t.truthy(commit, `the commit of ${task.source}`);
    t.is(commit.message, `ingest ${task.source}`);
    const written = commit.changes.filter((c: any) => c.action !== 'create' || !['one', 'one/commit', 'one/by-key'].includes(c.path)).map((c: any) => c.path);
    t.deepEqual(written.sort(), task.result.nodes.map((n: any) => n.path).sort(), 'the commit holds every node of the task, and only them');
    if (task === keyTask) t.like(commit, { actor_type: 'agent', actor_id: keyId, author: 'agent:ingester' });
    else {
      t.is(commit.actor_type, 'user');
      t.true(userIds.has(commit.actor_id));
    }
  }
  const md = await server.api('GET', `/content/${projectId}/cat?path=one/commit/notes.md`, { token });
  t.is(md.body.data.content, 'First line\n\nSecond paragraph');
  t.deepEqual(await noTaskDirs(server.dataDir), [], 'temporary files go when their task ends');
});

test.serial('keep_original stores the upload beside its result; the same name again is a new version; the same content none', async (t) => {
  const first = await submitFiles(server, token, { project_id: projectId, path: 'kept', keep_original: 'true' }, [{ name: 'rows.csv', content: 'a,b\n1,2\n', type: 'text/csv' }]);
  const done = await waitTask(server, token, first.body.data.tasks[0].id);
  t.deepEqual(
    done.result.nodes.map((n: any) => [n.path, n.type, n.version]),
    [
      ['kept/rows.json', 'json', 1],
      ['kept/rows.md', 'markdown', 1],
      ['kept/rows.csv', 'file', 1],
    ],
    'a CSV without a mode: JSON rows and a Markdown preview, as an XLSX sheet',
  );
  const original = await fetch(`${server.url}/api/v1/content/${projectId}/raw?path=kept/rows.csv`, { headers: { authorization: `Bearer ${token}` } });
  t.is(original.status, 200);
  t.is(await original.text(), 'a,b\n1,2\n', 'the original, byte for byte');

  const changed = await submitFiles(server, token, { project_id: projectId, path: 'kept', mode: 'json' }, [{ name: 'rows.csv', content: 'a,b\n1,2\n3,4\n' }]);
  const again = await waitTask(server, token, changed.body.data.tasks[0].id);
  t.deepEqual(again.result.nodes.map((n: any) => [n.path, n.type, n.version]), [['kept/rows.json', 'json', 2]], 'mode json: the JSON alone');
  const json = await server.api('GET', `/content/${projectId}/cat?path=kept/rows.json`, { token });
  t.deepEqual(json.body.data.content, [
    { a: 1, b: 2 },
    { a: 3, b: 4 },
  ]);

  const newer = await submitFiles(server, token, { project_id: projectId, path: 'kept' }, [{ name: 'rows.csv', content: 'a,b\n5,6\n' }]);
  const v2 = await waitTask(server, token, newer.body.data.tasks[0].id);
  t.deepEqual(
    v2.result.nodes.map((n: any) => [n.path, n.version]),
    [
      ['kept/rows.json', 3],
      ['kept/rows.md', 2],
    ],
    'an existing node gets a new version',
  );
  const same = await submitFiles(server, token, { project_id: projectId, path: 'kept' }, [{ name: 'rows.csv', content: 'a,b\n5,6\n' }]);
  const unchanged = await waitTask(server, token, same.body.data.tasks[0].id);
  t.is(unchanged.status, 'succeeded');
  t.deepEqual(
    unchanged.result.nodes.map((n: any) => [n.path, n.version]),
    [
      ['kept/rows.json', 3],
      ['kept/rows.md', 2],
    ],
    'nothing new: no new version',
  );
  t.is(unchanged.result.project_version, null, 'and no commit');

  const raw = await submitFiles(server, token, { project_id: projectId, path: 'kept', mode: 'raw' }, [{ name: 'blob.bin', content: new Uint8Array([0, 1, 2, 255]) }]);
  const stored = await waitTask(server, token, raw.body.data.tasks[0].id);
  t.deepEqual(stored.result.nodes.map((n: any) => [n.path, n.type]), [['kept/blob.bin', 'file']]);
});

test.serial('a corrupt file fails its own task with a clear message; the other files of the submission succeed', async (t) => {
  const res = await submitFiles(server, token, { project_id: projectId, path: 'mixed' }, [
    { name: 'broken.pdf', content: '%PDF-1.4 this is not really a PDF', type: 'application/pdf' },
    { name: 'fine.txt', content: 'fine' },
  ]);
  const [broken, fine] = await waitAll(server, token, res.body.data.tasks.map((x: any) => x.id));
  t.is(broken.status, 'failed');
  t.is(broken.error.code, 'corrupt');
  t.regex(broken.error.message, /PDF/);
  t.is(broken.result, null);
  t.is(fine.status, 'succeeded');
  t.is((await server.api('GET', `/content/${projectId}/cat?path=mixed/broken.md`, { token })).status, 404);
});

test.serial('cancel: a queued task never runs; a running one stops and writes nothing; a finished one is 409', async (t) => {
  const block = await blocker('/slow-1');
  const queued = await submitFiles(server, token, { project_id: projectId, path: 'never' }, [{ name: 'never.txt', content: 'never' }]);
  const queuedId = queued.body.data.tasks[0].id;
  t.is((await server.api('GET', `/ingest/tasks/${queuedId}`, { token })).body.data.status, 'queued');
  const cancelQueued = await server.api('DELETE', `/ingest/tasks/${queuedId}`, { token });
  t.is(cancelQueued.status, 200);
  t.like(cancelQueued.body.data, { status: 'cancelled', started_at: null });
  t.false(existsSync(join(server.dataDir, 'tmp/ingest/tasks', queuedId)), "a cancelled task's upload is removed");

  // The blocker is running (fetching): cancel it mid-fetch.
  t.is((await server.api('GET', `/ingest/tasks/${block.id}`, { token })).body.data.status, 'running');
  const cancelRunning = await server.api('DELETE', `/ingest/tasks/${block.id}`, { token });
  t.is(cancelRunning.status, 200);
  t.is(cancelRunning.body.data.status, 'cancelled');
  block.release();

  // A running conversion (a long PDF) is stopped: its process is killed and nothing is written.
  const pdf = work.path('long.pdf');
  writePdf(pdf, textPages(1500));
  const long = await submitFiles(server, token, { project_id: projectId, path: 'never' }, [{ name: 'long.pdf', content: readFileSync(pdf), type: 'application/pdf' }]);
  const longId = long.body.data.tasks[0].id;
  await waitTask(server, token, longId, (x) => x.status === 'running' && x.progress?.unit === 'pages' && x.progress.done > 0);
  const cancelConversion = await server.api('DELETE', `/ingest/tasks/${longId}`, { token });
  t.is(cancelConversion.body.data.status, 'cancelled');
  t.true(cancelConversion.body.data.progress.done < 1500, 'stopped before the end');

  const after = await submitFiles(server, token, { project_id: projectId, path: 'after-cancel' }, [{ name: 'ok.txt', content: 'ok' }]);
  const ok = await waitTask(server, token, after.body.data.tasks[0].id);
  t.is(ok.status, 'succeeded', 'the worker goes on with the next task');
  for (const id of [queuedId, block.id, longId]) t.is((await server.api('GET', `/ingest/tasks/${id}`, { token })).body.data.status, 'cancelled');
  t.is((await server.api('GET', `/content/${projectId}/ls?path=never`, { token })).status, 404, 'the cancelled tasks wrote nothing');
  t.is((await server.api('GET', `/content/${projectId}/ls?path=held`, { token })).status, 404);

  const finished = await server.api('DELETE', `/ingest/tasks/${ok.id}`, { token });
  t.is(finished.status, 409);
  t.is(finished.body.code, 'CONFLICT');
});

test.serial('projects take turns: a project that queued many files does not hold back another', async (t) => {
  const other = await createProject(server, token, orgId, 'turns');
  const block = await blocker('/slow-turns');
  const many = await submitFiles(
    server,
    token,
    { project_id: projectId, path: 'turns' },
    Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.txt`, content: `file ${i}` })),
  );
  const one = await submitFiles(server, token, { project_id: other, path: 'turns' }, [{ name: 'other.txt', content: 'other' }]);
  block.release();
  const manyTasks = await waitAll(server, token, many.body.data.tasks.map((x: any) => x.id));
  const [otherTask] = await waitAll(server, token, [one.body.data.tasks[0].id]);
  const starts = manyTasks.map((x) => x.started_at).sort();
  t.true(otherTask.started_at <= starts[1]!, `the other project's task started second at the latest (${otherTask.started_at} vs ${starts.join(', ')})`);
  t.true(otherTask.finished_at <= starts[4]!);
});

test.serial('a key revoked while its task waits writes nothing: the task fails forbidden', async (t) => {
  const key = await createKey(server, token, projectId, { mode: 'read_write', name: 'short-lived' });
  const block = await blocker('/slow-revoke');
  const res = await submitFiles(server, key.key, { project_id: projectId, path: 'revoked' }, [{ name: 'r.txt', content: 'r' }]);
  t.is(res.status, 202);
  t.is((await server.api('DELETE', `/connections/${key.id}`, { token })).status, 200);
  block.release();
  const done = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(done.status, 'failed');
  t.is(done.error.code, 'forbidden');
  t.regex(done.error.message, /no longer exists or was revoked/);
  t.is((await server.api('GET', `/content/${projectId}/ls?path=revoked`, { token })).status, 404);
});

/**
 * A URL task submitted with `credential` that has passed its start check and is fetching (its
 * page held); `change` is made, then the page is released: the task's one commit asks the policy
 * again and writes nothing.
 */
async function changedWhileRunning(t: ExecutionContext, credential: string, path: string, change: () => Promise<void>) {
  const held = site.hold(`/${path}`, { body: html(path, '<p>written only if still allowed</p>') });
  const res = await server.api('POST', '/ingest/submit/saas', { token: credential, body: { project_id: projectId, path, source: { type: 'url', url: `${site.url}/${path}` } } });
  t.is(res.status, 202, JSON.stringify(res.body));
  const id = res.body.data.tasks[0].id as string;
  await held.requested;
  t.is((await server.api('GET', `/ingest/tasks/${id}`, { token })).body.data.status, 'running');
  const before = (await commits()).length;
  await change();
  held.release();
  const done = await waitTask(server, token, id);
  t.is(done.status, 'failed');
  t.is(done.result, null);
  t.is((await commits()).length, before, 'no commit');
  t.is((await server.api('GET', `/content/${projectId}/ls?path=${path}`, { token })).status, 404, 'nothing written');
  return done.error as { code: string; message: string };
}

test.serial('a key revoked while its task runs (after its start check) writes nothing: the task fails forbidden', async (t) => {
  const key = await createKey(server, token, projectId, { mode: 'read_write', name: 'revoked-mid-task' });
  const error = await changedWhileRunning(t, key.key, 'revoked-mid-task', async () => {
    t.is((await server.api('PATCH', `/connections/${key.id}`, { token, body: { status: 'revoked' } })).status, 200);
  });
  t.is(error.code, 'forbidden');
  t.regex(error.message, /no longer exists or was revoked/);
});

test.serial("a key's scope narrowed while its task runs writes nothing: the task fails forbidden", async (t) => {
  const key = await createKey(server, token, projectId, { mode: 'read_write', name: 'narrowed-mid-task' });
  const error = await changedWhileRunning(t, key.key, 'narrowed-mid-task', async () => {
    t.is((await server.api('PATCH', `/connections/${key.id}`, { token, body: { scope_path: 'elsewhere' } })).status, 200);
  });
  t.is(error.code, 'forbidden');
  t.regex(error.message, /may no longer write narrowed-mid-task: This access key is limited to "elsewhere"/);
});

test.serial("a user's role lowered to viewer while their task runs writes nothing: the task fails forbidden", async (t) => {
  const editor = await server.createUser('ingest-editor@example.com');
  t.is((await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: editor.id, role: 'editor' } })).status, 201);
  const error = await changedWhileRunning(t, editor.token, 'lowered-mid-task', async () => {
    t.is((await server.api('PUT', `/projects/${projectId}/members/${editor.id}/role`, { token, body: { role: 'viewer' } })).status, 200);
  });
  t.is(error.code, 'forbidden');
  t.regex(error.message, /may no longer write lowered-mid-task: Your role \(viewer\)/);
});

test.serial('a restart: running and queued tasks run again from the beginning on the next start; leftovers are swept', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-ingest-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer({ dataDir }, ONE_WORKER);
  const tok = (await first.login()).token;
  const { projectId: pid } = await defaultProject(first, tok);
  const held = site.hold('/restart', { body: html('restart', '<p>after the restart</p>') });
  const url = await first.api('POST', '/ingest/submit/saas', { token: tok, body: { project_id: pid, path: 'r', source: { type: 'url', url: `${site.url}/restart` } } });
  await held.requested;
  const files = await submitFiles(first, tok, { project_id: pid, path: 'r' }, [
    { name: 'a.txt', content: 'a' },
    { name: 'b.txt', content: 'b' },
    { name: 'c.txt', content: 'c' },
  ]);
  const ids = [url.body.data.tasks[0].id, ...files.body.data.tasks.map((x: any) => x.id)];
  t.is((await first.api('GET', `/ingest/tasks/${ids[0]}`, { token: tok })).body.data.status, 'running');
  await first.stop();

  // As after a crash: one task left running; and leftovers of a task that no longer exists.
  const metadata = await openMetadataOfDataDir(dataDir);
  await metadata.db.updateTable('ingest_tasks').set({ status: 'running', started_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', ids[3]).execute();
  const statuses = await metadata.db.selectFrom('ingest_tasks').select(['id', 'status']).execute();
  await metadata.close();
  t.deepEqual(Object.fromEntries(statuses.map((r) => [r.id, r.status])), { [ids[0]]: 'queued', [ids[1]]: 'queued', [ids[2]]: 'queued', [ids[3]]: 'running' });
  mkdirSync(join(dataDir, 'tmp/ingest/tasks/ing_gone'), { recursive: true });
  writeFileSync(join(dataDir, 'tmp/ingest/tasks/ing_gone/source'), 'x');
  mkdirSync(join(dataDir, 'tmp/ingest/uploads/u-half'), { recursive: true });

  held.release();
  const second = await startTestServer({ dataDir }, ONE_WORKER);
  t.teardown(() => second.stop());
  t.false(existsSync(join(dataDir, 'tmp/ingest/tasks/ing_gone')), "a task's leftovers go at start-up");
  t.false(existsSync(join(dataDir, 'tmp/ingest/uploads/u-half')));
  const tok2 = (await second.login()).token;
  const done = await waitAll(second, tok2, ids);
  t.deepEqual(done.map((x) => x.status), ['succeeded', 'succeeded', 'succeeded', 'succeeded'], JSON.stringify(done.map((x) => x.error)));
  t.true(done[3].started_at > '2020-01-01T00:00:00.000Z', 'the interrupted task started again');
  t.is(site.requests.filter((r) => r === '/restart').length, 2, 'the page was fetched again from the beginning');
  const cat = await second.api('GET', `/content/${pid}/cat?path=r/restart.md`, { token: tok2 });
  t.regex(cat.body.data.content, /after the restart/);
  t.deepEqual(await noTaskDirs(dataDir), []);
});

test.serial('a task is never seen succeeded without its result: its commit names it, then success and result are recorded together', async (t) => {
  // Read from another connection the moment the commit is acknowledged, before the queue's own continuation runs.
  // On PostgreSQL (CNS_TEST_ENGINE=postgres) the other connection is a session of its own: the
  // read is sent at once, from the same callback, and answered later.
  const seen: { status: string; result: string | null }[] = [];
  const reading: Promise<unknown>[] = [];
  const { CNS_DATABASE_URL: url } = await databaseOfDataDir(server.dataDir);
  const remote = url ? new pg.Client({ connectionString: url }) : null;
  await remote?.connect();
  const reader = remote ? null : new Database(join(server.dataDir, 'cns.db'), { readonly: true });
  t.teardown(async () => {
    reader?.close();
    await remote?.end();
  });
  const stop = server.services.content.onCommitted((tip) => {
    if (tip.projectId !== projectId) return;
    const query = `SELECT status, result FROM ingest_tasks WHERE project_id = $1 AND target_path = 'atomic'`;
    if (remote) reading.push(remote.query(query, [projectId]).then(({ rows }) => seen.push(...(rows as typeof seen))));
    else seen.push(...(reader!.prepare(query.replace('$1', '?')).all(projectId) as typeof seen));
  });
  t.teardown(stop);
  const res = await submitFiles(server, token, { project_id: projectId, path: 'atomic' }, [{ name: 'a.txt', content: 'atomic', type: 'text/plain' }]);
  t.is(res.status, 202, JSON.stringify(res.body));
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'succeeded');
  t.deepEqual(task.result.nodes.map((n: { path: string }) => n.path), ['atomic/a.md']);
  await Promise.all(reading);
  t.is(seen.length, 1, 'read when its commit was acknowledged');
  if (remote) {
    // Answered after the callback returned, the read may come after the queue recorded success:
    // what holds on PostgreSQL is that success is never seen without its result.
    const [first] = seen;
    t.true(first?.status === 'running' ? first.result === null : first?.status === 'succeeded' && first.result !== null, JSON.stringify(first));
  } else t.deepEqual(seen[0], { status: 'running', result: null }, 'the commit first: still running, no result');
  const commit = (await commits()).find((c) => c.version === task.result.project_version);
  t.is(commit.message, 'ingest a.txt');
  const full = await server.services.content.commitTrailers(projectId, commit.commit_id ?? commit.id);
  t.deepEqual(full, [`Cns-Ingest-Task: ${task.id}`], "the commit's trailer names the task");
});
