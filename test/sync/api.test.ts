import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey } from '../helpers/project.ts';
import { startWorld, type World } from './helpers.ts';

let w: World;
test.before(async () => {
  // The url sync test fetches from a server on this machine, which is refused by default.
  w = await startWorld({ urlFetchAllowPrivate: true });
});
test.after.always(async () => {
  await w?.server.stop();
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

async function bootstrap(config: Record<string, unknown> = {}, provider = 'folder') {
  const res = await w.server.api('POST', '/sync/bootstrap', { token: w.token, body: { project_id: w.projectId, provider, config } });
  if (res.status !== 201) throw new Error(`bootstrap: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.sync.id as string, key: res.body.data.key as string, sync: res.body.data.sync };
}

test('connectors are listed with the spec record (folder, url and the platforms)', async (t) => {
  const res = await w.server.api('GET', '/sync/connectors', { token: w.token });
  t.is(res.status, 200);
  const providers = res.body.data.connectors.map((c: { provider: string }) => c.provider);
  t.deepEqual(providers.slice(0, 6), ['folder', 'url', 'github', 'notion', 'linear', 'airtable']);
  t.deepEqual(providers.slice(6).sort(), ['gmail', 'google-calendar', 'google-docs', 'google-drive', 'google-sheets']);
  for (const c of res.body.data.connectors) {
    for (const field of ['provider', 'display_name', 'auth', 'sync_modes', 'directions', 'config_fields']) t.truthy(c[field], `${c.provider}.${field}`);
  }
  // Platforms say what a run can do and what their OAuth connection asks for.
  for (const c of res.body.data.connectors.slice(2)) {
    t.true(c.capabilities.pull, c.provider);
    t.true(Array.isArray(c.auth.scopes), c.provider);
    t.true(c.sync_modes.includes('interval'), c.provider);
  }
});

test('bootstrap, push-file, pull-files, ack-pull and run records', async (t) => {
  const a = await bootstrap({ path: 'api-flow' });
  t.is(a.sync.provider, 'folder');
  t.is(a.sync.scope_path, 'api-flow');
  t.true(a.key.startsWith('cns_'));
  const listed = await w.server.api('GET', `/sync/syncs?project_id=${w.projectId}`, { token: w.token });
  t.true(listed.body.data.syncs.some((s: { id: string }) => s.id === a.id));

  const pull0 = await w.server.api('GET', `/sync/syncs/${a.id}/pull-files?cursor=0`, { token: a.key });
  t.is(pull0.status, 200);
  t.deepEqual(pull0.body.data.files, []);
  const runId = pull0.body.data.run_id;

  const one = await w.server.api('POST', `/sync/syncs/${a.id}/push-file`, {
    token: a.key,
    body: { run_id: runId, action: 'write', path: 'api-flow/one.md', content: b64('# one\n'), base_version: 0 },
  });
  t.is(one.status, 200, JSON.stringify(one.body));
  t.is(one.body.data.files[0].node_type, 'markdown');
  const batch = await w.server.api('POST', `/sync/syncs/${a.id}/push-file`, {
    token: a.key,
    body: {
      run_id: runId,
      files: [
        { action: 'write', path: 'api-flow/two.json', content: b64('{"a":1}') },
        { action: 'write', path: 'api-flow/bad.json', content: b64('{half') },
        { action: 'move', from: 'api-flow/one.md', path: 'api-flow/uno.md', base_version: 1 },
      ],
    },
  });
  t.is(batch.status, 200, JSON.stringify(batch.body));
  t.deepEqual(batch.body.data.files.map((f: { node_type: string }) => f.node_type), ['json', 'file', 'markdown']);
  const ack = await w.server.api('POST', `/sync/syncs/${a.id}/ack-pull`, { token: a.key, body: { cursor: pull0.body.data.cursor, run_id: runId, files_down: 0 } });
  t.is(ack.status, 200);
  t.is(ack.body.data.run.status, 'succeeded');
  t.is(ack.body.data.run.files_up, 4);

  // Versions written through the sync carry actor type `sync`.
  const versions = await w.server.api('GET', `/content/${w.projectId}/versions?path=api-flow/uno.md`, { token: w.token });
  t.true(versions.body.data.versions.every((v: { actor_type?: string; actor?: { type: string } }) => (v.actor_type ?? v.actor?.type) === 'sync'));

  // A second sync of the same subtree pulls everything, paged.
  const b = await bootstrap({ path: 'api-flow' });
  const p1 = await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?cursor=0&limit=2`, { token: b.key });
  t.true(p1.body.data.has_more);
  t.is(p1.body.data.files.length, 2);
  const p2 = await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?cursor=0&limit=2&until=${p1.body.data.cursor}&after=${p1.body.data.next_after}&run_id=${p1.body.data.run_id}`, { token: b.key });
  t.false(p2.body.data.has_more);
  const paths = [...p1.body.data.files, ...p2.body.data.files].map((f: { path: string }) => f.path).sort();
  t.deepEqual(paths, ['api-flow/bad.json', 'api-flow/two.json', 'api-flow/uno.md']);
  const uno = [...p1.body.data.files, ...p2.body.data.files].find((f: { path: string }) => f.path === 'api-flow/uno.md');
  t.is(Buffer.from(uno.content, 'base64').toString(), '# one\n');

  // A listing without content, then the content of chosen files by id (within the open run).
  const listing = await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?cursor=0&content=0`, { token: b.key });
  t.is(listing.body.data.files.length, 3);
  t.true(listing.body.data.files.every((f: { content?: string }) => f.content === undefined));
  const fetched = await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?ids=${uno.node_id},unknown-node&run_id=${listing.body.data.run_id}`, { token: b.key });
  t.deepEqual(fetched.body.data.files.map((f: { action: string }) => f.action), ['upsert', 'delete']);
  t.is(Buffer.from(fetched.body.data.files[0].content, 'base64').toString(), '# one\n');
  t.is((await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?ids=${uno.node_id}`, { token: b.key })).status, 422);

  // Deltas: a trash in the project is a delete for the client.
  await w.server.api('POST', `/content/${w.projectId}/rm`, { token: w.token, body: { path: 'api-flow/uno.md' } });
  const delta = await w.server.api('GET', `/sync/syncs/${b.id}/pull-files?cursor=${p1.body.data.cursor}`, { token: b.key });
  t.deepEqual(delta.body.data.files.map((f: { action: string; node_id: string }) => [f.action, f.node_id]), [['delete', uno.node_id]]);

  const runs = await w.server.api('GET', `/sync/syncs/${a.id}/runs`, { token: w.token });
  t.is(runs.body.data.runs[0].id, runId);
  const run = await w.server.api('GET', `/sync/runs/${runId}`, { token: a.key });
  t.is(run.body.data.files_up, 4);
  const otherRun = await w.server.api('GET', `/sync/runs/${runId}`, { token: b.key });
  t.is(otherRun.status, 404);
});

test('only the sync key moves files; scope, pause, trigger and delete', async (t) => {
  const s = await bootstrap({ path: 'scoped' });
  const asUser = await w.server.api('POST', `/sync/syncs/${s.id}/push-file`, { token: w.token, body: { action: 'write', path: 'scoped/x.md', content: b64('x') } });
  t.is(asUser.status, 403);
  const outside = await w.server.api('POST', `/sync/syncs/${s.id}/push-file`, { token: s.key, body: { action: 'write', path: 'elsewhere.md', content: b64('x') } });
  t.is(outside.status, 403);
  const other = await bootstrap();
  t.is((await w.server.api('GET', `/sync/syncs/${s.id}/pull-files`, { token: other.key })).status, 404);

  t.is((await w.server.api('POST', `/sync/syncs/${s.id}/pause`, { token: w.token })).body.data.status, 'paused');
  const paused = await w.server.api('GET', `/sync/syncs/${s.id}/pull-files`, { token: s.key });
  t.is(paused.status, 409);
  t.is(paused.body.error.details.reason, 'paused');
  t.is((await w.server.api('POST', `/sync/syncs/${s.id}/resume`, { token: s.key })).body.data.status, 'active');
  t.is((await w.server.api('GET', `/sync/syncs/${s.id}/pull-files`, { token: s.key })).status, 200);

  t.is((await w.server.api('PATCH', `/sync/syncs/${s.id}/trigger`, { token: w.token, body: { trigger_mode: 'watch' } })).body.data.trigger_mode, 'watch');
  t.is((await w.server.api('PATCH', `/sync/syncs/${s.id}/trigger`, { token: w.token, body: { trigger_mode: 'hourly' } })).status, 422);
  t.is((await w.server.api('POST', `/sync/syncs/${s.id}/refresh`, { token: w.token })).status, 409);

  const status = await w.server.api('GET', `/sync/status?project_id=${w.projectId}`, { token: w.token });
  t.true(status.body.data.syncs >= 2);

  t.is((await w.server.api('DELETE', `/sync/syncs/${s.id}`, { token: w.token })).status, 200);
  t.is((await w.server.api('GET', `/sync/syncs/${s.id}/pull-files`, { token: s.key })).status, 401);
});

test('a url sync fetches its address on refresh and records the run', async (t) => {
  const site = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end('# fetched\n');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  t.teardown(() => site.close());
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/page.md`;
  t.is((await w.server.api('POST', '/sync/bootstrap', { token: w.token, body: { project_id: w.projectId, provider: 'url', config: {} } })).status, 422);
  const s = await bootstrap({ url, path: 'web/page.md' }, 'url');
  const refreshed = await w.server.api('POST', `/sync/syncs/${s.id}/refresh`, { token: w.token });
  t.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  t.is(refreshed.body.data.run.status, 'succeeded');
  const cat = await w.server.api('GET', `/content/${w.projectId}/cat?path=web/page.md`, { token: w.token });
  t.is(cat.body.data.content_text, '# fetched\n');
});

test('the changelog pages every change by commit number; keys see their scope only', async (t) => {
  const start = (await w.server.api('GET', `/sync/status?project_id=${w.projectId}`, { token: w.token })).body.data.project_version;
  for (const p of ['log/a.md', 'log/b.md', 'hidden/c.md']) {
    await w.server.api('POST', `/content/${w.projectId}/write`, { token: w.token, body: { path: p, node_type: 'markdown', content: p } });
  }
  await w.server.api('POST', `/content/${w.projectId}/mv`, { token: w.token, body: { old_path: 'log/a.md', new_path: 'log/a2.md' } });
  await w.server.api('POST', `/content/${w.projectId}/rm`, { token: w.token, body: { path: 'log/b.md', permanent: true } });

  const seen: { path: string; action: string; version: number }[] = [];
  let cursor = start;
  for (let pages = 0; ; pages++) {
    const res = await w.server.api('GET', `/sync/changelog?project_id=${w.projectId}&cursor=${cursor}&limit=2`, { token: w.token });
    t.is(res.status, 200);
    seen.push(...res.body.data.entries);
    cursor = res.body.data.cursor;
    if (!res.body.data.has_more) break;
    t.true(pages < 10);
  }
  // Other tests write to the project meanwhile: look at this test's paths only.
  const summary = seen.filter((e) => /^(log|hidden)\//.test(e.path)).map((e) => `${e.action} ${e.path}`);
  t.deepEqual(summary, ['create log/a.md', 'create log/b.md', 'create hidden/c.md', 'move log/a2.md', 'delete log/b.md']);
  for (const e of seen.filter((x) => /^(log|hidden)\//.test(x.path))) {
    const entry = e as unknown as { actor: { type: string }; created_at: string; node_type: string };
    t.is(entry.actor.type, 'user');
    t.truthy(entry.created_at && entry.node_type);
  }

  const key = await createKey(w.server, w.token, w.projectId, { scope_path: 'log', mode: 'read' });
  const scoped = await w.server.api('GET', `/sync/changelog?project_id=${w.projectId}&cursor=${start}&limit=100`, { token: key.key });
  t.false(scoped.body.data.entries.some((e: { path: string }) => e.path.startsWith('hidden')));
  t.true(scoped.body.data.entries.some((e: { path: string }) => e.path === 'log/a2.md'));
});

test('issue 9: users with no relation to the project get 404 from push-file, pull-files and ack-pull; members 403', async (t) => {
  const s = await bootstrap({ path: 'strangers' });
  const stranger = await w.server.createUser(`sync-stranger-${process.pid}@example.com`);
  const calls: [string, string, unknown?][] = [
    ['POST', `/sync/syncs/${s.id}/push-file`, { action: 'write', path: 'strangers/x.md', content: b64('x') }],
    ['GET', `/sync/syncs/${s.id}/pull-files`],
    ['POST', `/sync/syncs/${s.id}/ack-pull`, { cursor: 0 }],
  ];
  for (const [method, path, body] of calls) {
    const res = await w.server.api(method, path, { token: stranger.token, body });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'NOT_FOUND');
    // The user who made the sync may pull its files with their own token (PuppyOne's clients do, issue 32); moving files stays the key's.
    t.is((await w.server.api(method, path, { token: w.token, body })).status, method === 'GET' ? 200 : 403, `${method} ${path} as the owner`);
  }
});

test('issue 9: pull-files?ids= tells nothing about nodes outside the scope, not even their type', async (t) => {
  const s = await bootstrap({ path: 'ids-scope' });
  const outside = await w.server.api('POST', `/content/${w.projectId}/write`, { token: w.token, body: { path: 'ids-outside/secret.json', node_type: 'json', content: { a: 1 } } });
  const folder = await w.server.api('GET', `/content/${w.projectId}/stat?path=ids-outside`, { token: w.token });
  const first = await w.server.api('GET', `/sync/syncs/${s.id}/pull-files?cursor=0&content=0`, { token: s.key });
  const res = await w.server.api('GET', `/sync/syncs/${s.id}/pull-files?ids=${outside.body.data.id},${folder.body.data.id},nod_unknown1234&run_id=${first.body.data.run_id}`, { token: s.key });
  t.is(res.status, 200);
  t.deepEqual(
    res.body.data.files.map((f: { action: string; node_type: string; path: string }) => [f.action, f.node_type, f.path]),
    [['delete', 'file', ''], ['delete', 'file', ''], ['delete', 'file', '']],
  );
});

test('issue 9: push-file validation names the real fields; ack-pull refuses a cursor beyond the project', async (t) => {
  const s = await bootstrap({ path: 'fields' });
  const push = (body: unknown) => w.server.api('POST', `/sync/syncs/${s.id}/push-file`, { token: s.key, body });
  const fieldsOf = (res: { body: { error: { details: { field: string }[] } } }) => res.body.error.details.map((d) => d.field);

  const noContent = await push({ action: 'write', path: 'fields/a.md' });
  t.is(noContent.status, 422);
  t.deepEqual(fieldsOf(noContent), ['content']);
  t.regex(noContent.body.message, /content/);
  const noAction = await push({ path: 'fields/a.md', content: b64('a') });
  t.deepEqual(fieldsOf(noAction), ['action']);
  const inBatch = await push({ files: [{ action: 'write', path: 'fields/a.md', content: b64('a') }, { action: 'move', path: 'fields/b.md' }] });
  t.is(inBatch.status, 422);
  t.deepEqual(fieldsOf(inBatch), ['files.1.from']);
  const badBase64 = await push({ action: 'write', path: 'fields/a.md', content: '%%%' });
  t.deepEqual(fieldsOf(badBase64), ['content']);

  const latest = (await w.server.api('GET', `/sync/status?project_id=${w.projectId}`, { token: w.token })).body.data.project_version as number;
  const beyond = await w.server.api('POST', `/sync/syncs/${s.id}/ack-pull`, { token: s.key, body: { cursor: latest + 1000 } });
  t.is(beyond.status, 422);
  t.deepEqual(fieldsOf(beyond), ['cursor']);
  const state = (await w.server.api('GET', `/sync/syncs?project_id=${w.projectId}`, { token: w.token })).body.data.syncs.find((x: { id: string }) => x.id === s.id);
  t.is(state.acked_cursor, 0, 'nothing acknowledged');
  t.is((await w.server.api('POST', `/sync/syncs/${s.id}/ack-pull`, { token: s.key, body: { cursor: latest } })).status, 200);
});

test('issue 9: a failed url refresh answers an error (502) in the envelope, with the failed run recorded', async (t) => {
  const site = createServer((_req, res) => {
    res.writeHead(500);
    res.end('down');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  t.teardown(() => site.close());
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/page.md`;
  const s = await bootstrap({ url, path: 'web/down.md' }, 'url');
  const res = await w.server.api('POST', `/sync/syncs/${s.id}/refresh`, { token: w.token });
  t.is(res.status, 502);
  t.false(res.body.success);
  t.is(res.body.error.code, 'UPSTREAM_ERROR');
  t.is(res.body.error.details.run.status, 'failed');
  t.regex(res.body.message, /500/);
  const runs = await w.server.api('GET', `/sync/syncs/${s.id}/runs`, { token: w.token });
  t.is(runs.body.data.runs[0].status, 'failed');
});
