import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { bootstrap } from '../../src/app/bootstrap.ts';
import { createApp } from '../../src/app/createApp.ts';
import { closeServices, createServices, startWebhooks, type Services } from '../../src/app/services.ts';
import type { Ownership } from '../../src/cluster/ownership.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { waitTask, submitFiles } from '../ingest/ingestClient.ts';
import { contentApi, createProject, defaultProject } from '../helpers/project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.ts';
import { Receiver } from '../webhooks/receiver.ts';

// The service's background work under several workers (issue 29), one worker built with a test
// Ownership: it owns one project of two and is not the first of the box. Its owned project's
// search index, ingestion tasks and webhook deliveries are done; the other's are not until it
// takes that project over; recovery that assumes no other process leaves others' work alone.

/** Owns the projects in `owned`; `acquire` takes one over as a lease would. */
function testOwnership(owned: Set<string>, o: { boxStart: boolean; boxDuties: boolean; workerName: string }): Ownership & { acquire(projectId: string): void } {
  const listeners = new Set<(projectId: string) => void>();
  return {
    alone: false,
    ...o,
    holds: (p) => owned.has(p),
    adopt: (p) => owned.has(p),
    soleWriterSince: () => undefined,
    onAcquired(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    acquire(p) {
      owned.add(p);
      for (const fn of listeners) fn(p);
    },
  };
}

/** The service as a worker runs it (src/app/server.ts's order), with `ownership`, on an ephemeral port. */
async function serveWith(dataDir: string, ownership: Ownership): Promise<{ services: Services; server: TestServer; close(): Promise<void> }> {
  const settings = loadSettings(
    { CNS_ADMIN_EMAIL: ADMIN_EMAIL, CNS_ADMIN_PASSWORD: ADMIN_PASSWORD, CNS_RATE_LIMIT_MAX: '0', CNS_LOGIN_RATE_LIMIT_MAX: '0' },
    { host: '127.0.0.1', port: 0, dataDir, urlFetchAllowPrivate: true },
  );
  const services = createServices(settings, createLogger('silent'), ownership);
  await bootstrap(services);
  await services.agents.start();
  await services.syncRuntime.start();
  startWebhooks(services);
  const http = createServer(createApp(services).callback());
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const api: TestServer['api'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}/api/v1${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  const server = { url, api, services } as unknown as TestServer;
  return {
    services,
    server,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await closeServices(services);
    },
  };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a worker does the background work of the projects it owns, takes over another's when it acquires it, and leaves recovery to the box's start", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-owned-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  // Set up as one process: two projects, each with a search tool.
  // SQLite on both passes (a blank CNS_DATABASE_URL): the rows of "another worker" are written into cns.db below.
  const alone = await startTestServer({ dataDir, urlFetchAllowPrivate: true }, { CNS_DATABASE_URL: '' });
  const token = (await alone.login()).token;
  const { projectId: mine, orgId } = await defaultProject(alone, token);
  const theirs = await createProject(alone, token, orgId, 'theirs');
  for (const p of [mine, theirs]) t.is((await alone.api('POST', '/tools/search', { token, body: { project_id: p, name: 's' } })).status, 202);
  const sandboxDir = alone.services.settings.sandboxDir;
  await alone.stop();

  // Work another worker is doing right now: a task, a sync run and an agent turn, and its sandbox pool.
  const raw = new Database(join(dataDir, 'cns.db'));
  raw.pragma('foreign_keys = OFF');
  const now = new Date().toISOString();
  raw
    .prepare(`INSERT INTO ingest_tasks (id, project_id, source, kind, status, target_path, keep_original, input, created_by, actor, created_at, started_at) VALUES ('tsk_elsewhere', ?, 'a.txt', 'file', 'running', 'in', 0, '{}', 'usr_x', '{"type":"user","id":"usr_x"}', ?, ?)`)
    .run(theirs, now, now);
  raw.prepare(`INSERT INTO sync_states (sync_id, project_id, provider, trigger_mode, status, created_at, updated_at) VALUES ('syn_x', ?, 'github', 'manual', 'active', ?, ?)`).run(theirs, now, now);
  raw.prepare(`INSERT INTO sync_runs (id, sync_id, project_id, trigger, status, started_at) VALUES ('run_elsewhere', 'syn_x', ?, 'manual', 'running', ?)`).run(theirs, now);
  raw.prepare(`INSERT INTO agent_executions (id, agent_id, status, started_at, model) VALUES ('exe_elsewhere', 'agt_x', 'running', ?, 'openai/gpt')`).run(now);
  raw.close();
  mkdirSync(join(sandboxDir, 'w1', 'runs', 'live-command'), { recursive: true });

  const ownership = testOwnership(new Set([mine]), { boxStart: false, boxDuties: false, workerName: 'w2' });
  const w = await serveWith(dataDir, ownership);
  t.teardown(() => w.close());
  const { services, server } = w;
  const status = (table: string, id: string) => (services.db.prepare(`SELECT status FROM ${table} WHERE id = ?`).get(id) as { status: string }).status;

  t.false(services.checkpointer.running, 'the WAL checkpointer runs on the worker with the box duties');
  t.is(status('ingest_tasks', 'tsk_elsewhere'), 'running');
  t.is(status('sync_runs', 'run_elsewhere'), 'running');
  t.is(status('agent_executions', 'exe_elsewhere'), 'running');
  await services.sandbox.pool.ready;
  t.true(existsSync(join(sandboxDir, 'w2', 'runs')), "this worker's pool has a folder of its own");
  t.true(existsSync(join(sandboxDir, 'w1', 'runs', 'live-command')), "another worker's live folder is left alone");

  // The search indexer runs for the owned project only.
  t.true(services.tools.indexer.isEnabled(mine));
  t.false(services.tools.indexer.isEnabled(theirs));

  // Webhooks: a commit of each project; only the owned project's delivery is sent.
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const hooks: Record<string, string> = {};
  for (const p of [mine, theirs]) {
    const res = await server.api('POST', `/projects/${p}/webhooks`, { token, body: { url: r.url, events: ['content.created'] } });
    t.is(res.status, 201, JSON.stringify(res.body));
    hooks[p] = res.body.data.id;
    t.is((await contentApi(server, token, p)('POST', '/write', { path: 'hello.md', content: '# hi', node_type: 'markdown' })).status, 201);
  }
  await r.waitFor(() => r.received.length >= 1);

  // Ingestion: a file submitted to each project; only the owned project's task runs.
  const submit = async (p: string) => {
    const res = await submitFiles(server, token, { project_id: p, path: 'in' }, [{ name: 'notes.txt', content: `notes of ${p}`, type: 'text/plain' }]);
    t.is(res.status, 202, JSON.stringify(res.body));
    return (res.body as { data: { tasks: { id: string }[] } }).data.tasks[0]!.id;
  };
  const [taskMine, taskTheirs] = [await submit(mine), await submit(theirs)];
  t.is((await waitTask(server, token, taskMine)).status, 'succeeded');
  // Several polls of the queue (1 s) and the dispatcher (1 s) later, the other project's work still waits.
  const waited = Date.now();
  await until('two polls', () => Date.now() - waited > 2200);
  t.is(status('ingest_tasks', taskTheirs), 'queued');
  const from = (p: string) => r.received.filter((x) => x.body.project_id === p).length;
  t.true(from(mine) >= 1);
  t.is(from(theirs), 0);
  const pending = (await server.api('GET', `/projects/${theirs}/webhooks/${hooks[theirs]}/deliveries`, { token })).body.data.deliveries;
  t.like(pending[0], { status: 'pending', attempts: 0 });

  // This worker takes the other project over: its index, its task and its delivery go.
  ownership.acquire(theirs);
  // Whether the project has a search tool is asked of the metadata store: the index starts once it answers.
  await until('the index of the adopted project started', () => services.tools.indexer.isEnabled(theirs));
  t.is((await waitTask(server, token, taskTheirs)).status, 'succeeded');
  await r.waitFor(() => from(theirs) >= 1);
  t.like(r.received.find((x) => x.body.project_id === theirs)!.body, { event: 'content.created' });
  t.is(status('ingest_tasks', 'tsk_elsewhere'), 'running', 'a task running elsewhere is still not run twice');
});
