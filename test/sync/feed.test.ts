import test from 'ava';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { ChangeFeed } from '../../src/events/changeFeed.ts';
import type { Changelog, CommitChanges } from '../../src/events/changelog.ts';
import { GitClient, remoteUrl } from '../git/gitFixture.ts';
import { createKey } from '../helpers/project.ts';
import { startTestServer } from '../helpers/server.ts';
import { defaultProject } from '../helpers/project.ts';
import { engineFor, folderWith, startWorld, until, type World } from './helpers.ts';
import { SseClient } from './sse.ts';

let w: World;
test.before(async () => {
  w = await startWorld();
});
test.after.always(async () => {
  await w?.server.stop();
});

const eventsUrl = () => `${w.server.url}/api/v1/events?project_id=${w.projectId}`;
const write = (path: string, content: string, token = w.token) =>
  w.server.api('POST', `/content/${w.projectId}/write`, { token, body: { path, node_type: 'markdown', content } });

async function subscribe(token = w.token, headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await SseClient.open(eventsUrl(), token, headers);
  await c.waitFor('ready', () => c.events.some((e) => e.event === 'ready'));
  return c;
}

test('GET /auth/config advertises the feed, and it needs a credential', async (t) => {
  const config = await w.server.api('GET', '/auth/config');
  t.is(config.body.data.realtime_url, `${w.server.services.settings.baseUrl}/api/v1/events`);
  const anonymous = await fetch(eventsUrl());
  t.is(anonymous.status, 401);
  await anonymous.body?.cancel();
});

test('an API write is one event: commit number as id, actor, message, changed paths with ids, operations, versions', async (t) => {
  const feed = await subscribe();
  t.teardown(() => feed.close());
  const res = await write('feed-api/hello.md', 'hello');
  const pv = res.body.data.project_version;
  const ev = await feed.waitFor('the write event', () => feed.changes.find((c) => c.id === pv));
  t.is(ev.data.project_version, pv);
  t.is(ev.data.actor.type, 'user');
  t.is(ev.data.message, 'write feed-api/hello.md');
  const change = ev.data.changes.find((c) => c.path === 'feed-api/hello.md')!;
  t.is(change.node_id, res.body.data.id);
  t.is(change.operation, 'create');
  t.is(change.version, 1);
  t.true(ev.data.changes.some((c) => c.path === 'feed-api' && c.operation === 'create'));
});

test('sync pushes and git pushes appear on the feed', async (t) => {
  const feed = await subscribe();
  t.teardown(() => feed.close());
  const dir = folderWith({ 'pushed.md': 'from a folder\n' });
  const engine = await engineFor(w, dir, { path: 'feed-sync' });
  await engine.cycle();
  const synced = await feed.waitFor('the sync push', () => feed.changes.find((c) => c.data.changes.some((x) => x.path === 'feed-sync/pushed.md')));
  t.is(synced.data.actor.type, 'sync');
  t.is(synced.data.actor.id, engine.config.syncId);

  const git = new GitClient();
  t.teardown(() => git.dispose());
  const clone = git.dir('clone');
  await git.ok(['clone', remoteUrl(w.server, w.projectId, w.token), clone]);
  mkdirSync(join(clone, 'feed-git'), { recursive: true });
  writeFileSync(join(clone, 'feed-git/from-git.md'), '# pushed with git\n');
  await git.ok(['add', '.'], { cwd: clone });
  await git.ok(['commit', '-m', 'add from git'], { cwd: clone });
  await git.ok(['push', 'origin', 'main'], { cwd: clone });
  const pushed = await feed.waitFor('the git push', () => feed.changes.find((c) => c.data.changes.some((x) => x.path === 'feed-git/from-git.md')));
  t.is(pushed.data.message, 'add from git');
  t.is(pushed.data.actor.type, 'user');
});

test('a reconnecting client resumes from Last-Event-ID without gaps or repeats', async (t) => {
  const first = await subscribe();
  const a = await write('feed-resume/a.md', 'a');
  await first.waitFor('a', () => first.changes.some((c) => c.id === a.body.data.project_version));
  const last = String(first.changes[first.changes.length - 1]!.id);
  await first.close();
  const b = await write('feed-resume/b.md', 'b');
  const c = await write('feed-resume/c.md', 'c');
  const again = await subscribe(w.token, { 'last-event-id': last });
  t.teardown(() => again.close());
  const ids = again.changes.map((x) => x.id);
  t.true(ids.includes(b.body.data.project_version));
  t.true(ids.includes(c.body.data.project_version));
  t.false(ids.includes(Number(last)));
  t.deepEqual(ids, [...ids].sort((x, y) => x - y));
  // The replay comes before the ready event (later live events may follow it).
  const readyAt = again.events.findIndex((e) => e.event === 'ready');
  const replayedAt = again.events.findIndex((e) => e.id === String(c.body.data.project_version));
  t.true(replayedAt >= 0 && replayedAt < readyAt);
});

test('an access key sees only changes inside its scope', async (t) => {
  const key = await createKey(w.server, w.token, w.projectId, { scope_path: 'feed-team', mode: 'read' });
  const feed = await subscribe(key.key);
  t.teardown(() => feed.close());
  await write('feed-secret/plan.md', 'hidden');
  const visible = await write('feed-team/notes.md', 'shown');
  await feed.waitFor('the team write', () => feed.changes.find((c) => c.id === visible.body.data.project_version));
  const mixed = await w.server.api('POST', `/content/${w.projectId}/bulk-write`, {
    token: w.token,
    body: { files: [{ path: 'feed-team/x.md', node_type: 'markdown', content: 'x' }, { path: 'feed-secret/y.md', node_type: 'markdown', content: 'y' }] },
  });
  const ev = await feed.waitFor('the mixed commit', () => feed.changes.find((c) => c.id === mixed.body.data.project_version));
  t.deepEqual(ev.data.changes.map((c) => c.path), ['feed-team/x.md']);
  t.is(ev.data.message, '');
  t.false(JSON.stringify(feed.events).includes('feed-secret'));
});

test.serial('a stream ends as soon as its key is deleted, and a removed member gets nothing more', async (t) => {
  const key = await createKey(w.server, w.token, w.projectId, { mode: 'read' });
  const keyFeed = await subscribe(key.key);
  t.teardown(() => keyFeed.close());
  const member = await w.server.createUser(`feed-member-${Date.now()}@example.com`);
  const added = await w.server.api('POST', `/projects/${w.projectId}/members`, { token: w.token, body: { user_id: member.id, role: 'viewer' } });
  t.true(added.status < 300, JSON.stringify(added.body));
  const memberFeed = await subscribe(member.token);
  t.teardown(() => memberFeed.close());

  const deleted = await w.server.api('DELETE', `/connections/${key.id}`, { token: w.token });
  t.is(deleted.status, 200);
  await keyFeed.waitFor('the key stream to end', () => keyFeed.closed || undefined, 30_000);
  t.true(keyFeed.events.some((e) => e.event === 'revoked'));

  const removed = await w.server.api('DELETE', `/projects/${w.projectId}/members/${member.id}`, { token: w.token });
  t.is(removed.status, 200);
  const after = await write('feed-revoked/secret.md', 'written after the removal');
  await memberFeed.waitFor('the member stream to end', () => memberFeed.closed || undefined, 30_000);
  for (const feed of [keyFeed, memberFeed]) {
    t.false(feed.changes.some((c) => c.id >= after.body.data.project_version));
    t.false(JSON.stringify(feed.events).includes('feed-revoked'));
  }
});

test('access is re-checked before each fan-out: once it ends, the stream gets no event and closes', (t) => {
  const commits: CommitChanges[] = [commit(1)];
  const feed = new ChangeFeed(fakeChangelog(commits), { heartbeatMs: 60_000 });
  let allowed: string | null = '';
  const res = new StalledResponse();
  feed.attach(res as unknown as ServerResponse, { projectId: 'p', scope: '', lastEventId: 0, holder: 'key:k', check: () => allowed });
  t.true(res.chunks.some((c) => c.includes('"f1.md"')));
  allowed = null;
  commits.push(commit(2));
  feed.notify('p');
  t.false(res.chunks.some((c) => c.includes('"f2.md"')));
  t.regex(res.chunks.join(''), /event: revoked/);
  t.true(res.ended);
  t.is(feed.size, 0);
  t.true(feed.mayOpen('key:k'));
  feed.close();
});

test('one credential may hold only CNS_MAX_EVENT_STREAMS open streams; one more is 429', async (t) => {
  const server = await startTestServer({}, { CNS_MAX_EVENT_STREAMS: '2' });
  t.teardown(() => server.stop());
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const url = `${server.url}/api/v1/events?project_id=${projectId}`;
  const open = async () => {
    const c = await SseClient.open(url, token);
    if (c.status === 200) await c.waitFor('ready', () => c.events.some((e) => e.event === 'ready'));
    return c;
  };
  const a = await open();
  const b = await open();
  const c = await open();
  t.is(a.status, 200);
  t.is(b.status, 200);
  t.is(c.status, 429);
  await c.close();
  await a.close();
  await until('the closed stream to be released', () => server.services.feed.size < 2);
  const d = await open();
  t.is(d.status, 200);
  await Promise.all([b.close(), d.close()]);
});

// Serial: it counts the server's subscribers, which the other tests change.
test.serial('a consumer that goes away is dropped at once', async (t) => {
  const before = w.server.services.feed.size;
  const brief = await subscribe();
  t.true(w.server.services.feed.size > before);
  await brief.close();
  await until('the closed consumer to be dropped', () => w.server.services.feed.size <= before);
  t.pass();
});

test('the server ends open streams cleanly when it shuts down', async (t) => {
  const server = await startTestServer();
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const feed = await SseClient.open(`${server.url}/api/v1/events?project_id=${projectId}`, token);
  await feed.waitFor('ready', () => feed.events.some((e) => e.event === 'ready'));
  const started = Date.now();
  await server.stop();
  await feed.waitFor('the end of the stream', () => feed.closed || undefined).catch(() => undefined);
  t.true(feed.closed);
  t.true(Date.now() - started < 8_000, 'not cut by the 10 s grace period');
});

/** A response whose socket never drains: what a stalled consumer looks like to the server. */
class StalledResponse extends EventEmitter {
  chunks: string[] = [];
  writableLength = 0;
  ended = false;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {
    this.ended = true;
  }
}

function fakeChangelog(commits: CommitChanges[]): Changelog {
  return {
    latest: () => commits.length,
    commits: (_p: string, cursor: number, max: number) => commits.filter((c) => c.projectVersion > cursor).slice(0, max),
  } as unknown as Changelog;
}

const commit = (pv: number): CommitChanges => ({
  projectVersion: pv,
  commitId: `c${pv}`,
  actor: { type: 'user', id: 'u', author: 'u@example.com' },
  message: `write f${pv}.md`,
  createdAt: new Date().toISOString(),
  changes: [{ projectVersion: pv, nodeId: `n${pv}`, path: `f${pv}.md`, oldPath: null, action: 'create', nodeType: 'markdown', version: 1, actor: { type: 'user', id: 'u', author: 'u' }, createdAt: '' }],
});

test('a consumer too far behind is told to resync and closed; writers and other readers go on', (t) => {
  const commits: CommitChanges[] = [];
  const feed = new ChangeFeed(fakeChangelog(commits), { maxBufferBytes: 4096, heartbeatMs: 60_000 });
  const slow = new StalledResponse();
  feed.attach(slow as unknown as ServerResponse, { projectId: 'p', scope: '', lastEventId: null });
  for (let pv = 1; pv <= 100; pv++) {
    commits.push(commit(pv));
    feed.notify('p');
  }
  t.true(slow.ended);
  const tail = slow.chunks.join('').trim().split('\n\n').pop()!;
  t.regex(tail, /^event: resync\ndata: .*"cursor":\d+/);
  t.true(slow.writableLength < 4096 + 1024, 'the buffer stayed bounded');
  t.is(feed.size, 0);
  feed.close();
});

test('idle connections get heartbeats', async (t) => {
  const feed = new ChangeFeed(fakeChangelog([]), { heartbeatMs: 20 });
  const res = new StalledResponse();
  res.writableLength = 0;
  feed.attach(res as unknown as ServerResponse, { projectId: 'p', scope: '', lastEventId: null });
  const deadline = Date.now() + 30_000;
  while (!res.chunks.some((c) => c === ': keep-alive\n\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.true(res.chunks.includes(': keep-alive\n\n'));
  feed.close();
  t.true(res.ended);
});

