import test from 'ava';
import { createHash } from 'node:crypto';
import nock from 'nock';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen as ProviderSeen } from '../oauth/helpers.ts';
import { FakeGithub, GITHUB } from './fixtures/github/fakeGithub.ts';

// The GitHub connector end to end: a real server running the real connector through the sync
// runtime, connected with a personal access token, against a repository on nock (FakeGithub,
// GitHub's REST wire format). Runs go through the refresh route; content is read through the API.

const GH_TOKEN = 'github_pat_11AAE2Etest0token0one';

let server: OAuthTestServer;
let token: string;
let projectId: string;
/** The token check GitHub received when the project connected (in test.before). */
let validation: ProviderSeen;

const blobSha = (s: string | Buffer) => {
  const b = Buffer.from(s);
  return createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
};

/** Connects GitHub with the personal token; returns the validation request GitHub received. */
async function connectGithub(): Promise<ProviderSeen> {
  const seen: ProviderSeen[] = [];
  nock(GITHUB)
    .get('/user')
    .reply(recorder(seen, () => [200, { login: 'octocat', id: 1, type: 'User' }, { 'x-oauth-scopes': 'repo, read:user' }]));
  const res = await server.api('POST', '/oauth/github/token', { token, body: { project_id: projectId, token: GH_TOKEN } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
  return seen[0]!;
}

async function newSync(config: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config } });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return { id: res.body.data.sync.id as string, name: res.body.data.sync.name as string };
}

const refresh = async (syncId: string) => server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
const runOf = async (syncId: string) => {
  const res = await refresh(syncId);
  if (res.status !== 200) throw new Error(`refresh answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = async (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const versions = async (path: string) =>
  (await server.api('GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}`, { token })).body.data.versions as {
    version: number;
    actor_type: string;
    path: string;
  }[];
const write = async (path: string, content: unknown, nodeType: 'markdown' | 'json') => {
  const res = await server.api('POST', `/content/${projectId}/write`, { token, body: { path, content, node_type: nodeType } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
  return res;
};
const calls = (fake: FakeGithub) => fake.seen.map((s) => `${s.method} ${s.path}${Object.keys(s.query).length ? `?${new URLSearchParams(s.query)}` : ''}`);
const rootTree = (fake: FakeGithub) => fake.commits.get(fake.branches.get('main')!)!.tree;

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  // Every test needs the connection; the first one checks how it was made.
  validation = await connectGithub();
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connect with a personal token, bootstrap with the repository config, first full pull: files as json, markdown and file nodes, one sync commit', async (t) => {
  t.is(validation.headers.get('authorization'), `Bearer ${GH_TOKEN}`);
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { connected: true, kind: 'token', account: 'octocat', needs_reauth: false });

  const fake = new FakeGithub();
  fake.commit({
    'README.md': '# Docs\n',
    'guide/intro.md': 'Hello\n',
    'data/config.json': '{"a": 1, "list": [true, null]}',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]),
    'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: '100755' },
    // A symbolic link has no node form: left out.
    latest: { content: 'README.md', mode: '120000' },
  });
  fake.intercept();

  // The connector's own config rules apply at bootstrap.
  const bad = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path: '/gh/first', owner: 'not an owner!', repo: 'docs' } } });
  t.is(bad.status, 422, JSON.stringify(bad.body));
  t.regex(bad.body.message, /^owner is the GitHub user or organization/);
  const missing = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path: '/gh/first', owner: 'octo' } } });
  t.is(missing.status, 422, 'repo is required');

  const sync = await newSync({ path: '/gh/first', owner: 'octo', repo: 'docs', include_issues: false });
  const before = server.running.services.changelog.latest(projectId);
  const res = await refresh(sync.id);
  t.is(res.status, 200, JSON.stringify(res.body));
  assertDocumented(t, server.running.services, 'post', '/sync/syncs/{syncId}/refresh', res);
  const run = res.body.data.run;
  t.like(run, { status: 'succeeded', trigger: 'manual', pulled: { created: 5, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, cursor_before: null, rate_limited_ms: 0 });
  // The repository (its default branch), the branch, one recursive tree, one blob per file.
  t.true(run.http_calls > 0);
  t.is(run.http_calls, 3 + 5);
  t.is(run.http_calls, fake.seen.length);
  t.is(JSON.parse(run.cursor_after).commit, fake.branches.get('main'));
  for (const s of fake.seen) t.is(s.headers.authorization, `Bearer ${GH_TOKEN}`);

  // Five files under fifty per page: one commit, made by the sync.
  t.is(server.running.services.changelog.latest(projectId) - before, 1);
  const feed = server.running.services.changelog.between(projectId, before, before + 1);
  // The folders on the way are created in the same commit.
  t.deepEqual(feed.filter((e) => e.nodeType !== 'folder').map((e) => e.path).sort(), ['gh/first/README.md', 'gh/first/bin/run.sh', 'gh/first/data/config.json', 'gh/first/guide/intro.md', 'gh/first/img/logo.png']);
  t.true(feed.every((e) => e.actor.type === 'sync' && e.actor.id === sync.id));

  t.like((await cat('gh/first/README.md')).body.data, { type: 'markdown', content: '# Docs\n' });
  t.like((await cat('gh/first/guide/intro.md')).body.data, { type: 'markdown', content: 'Hello\n' });
  const json = (await cat('gh/first/data/config.json')).body.data;
  t.is(json.type, 'json');
  t.deepEqual(json.content, { a: 1, list: [true, null] });
  t.like((await cat('gh/first/img/logo.png')).body.data, { type: 'file', size: 6 });
  t.like((await cat('gh/first/bin/run.sh')).body.data, { type: 'file', size: 18 });
  t.is((await cat('gh/first/latest')).status, 404);
  t.is((await versions('gh/first/README.md'))[0]!.actor_type, 'sync');
});

test.serial('incremental run: only the changed blobs are fetched; a rename is a move of the same node, a deletion goes to the trash', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'README.md': '# Docs\n', 'guide/intro.md': 'Hello\n', 'data/old.json': '{"old": true}', 'notes/keep.md': 'kept\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/incr', owner: 'octo', repo: 'docs' });
  const first = await runOf(sync.id);
  t.like(first, { status: 'succeeded', pulled: { created: 4 } });
  const intro = (await cat('gh/incr/guide/intro.md')).body.data.id as string;

  const files = fake.filesAt();
  files['README.md'] = Buffer.from('# Docs, edited\n');
  files['guide/welcome.md'] = files['guide/intro.md']!; // renamed, same content
  delete files['guide/intro.md'];
  delete files['data/old.json'];
  fake.commit(files);
  fake.seen.length = 0;

  const second = await runOf(sync.id);
  t.like(second, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 1 }, pushed: 0, conflicts: [], cursor_before: first.cursor_after });
  // The default branch is remembered: no repository call; one tree listing; only the blobs of
  // the edited and the renamed file (the unchanged one's sha is known).
  t.deepEqual(calls(fake), [
    'GET /repos/octo/docs/branches/main',
    `GET /repos/octo/docs/git/trees/${rootTree(fake)}?recursive=1`,
    `GET /repos/octo/docs/git/blobs/${blobSha('# Docs, edited\n')}`,
    `GET /repos/octo/docs/git/blobs/${blobSha('Hello\n')}`,
  ]);
  t.is(second.http_calls, 4);
  t.is((await cat('gh/incr/README.md')).body.data.content, '# Docs, edited\n');

  // The renamed file is the same node, moved: its history is kept.
  const moved = await cat('gh/incr/guide/welcome.md');
  t.is(moved.body.data.id, intro);
  t.is(moved.body.data.content, 'Hello\n');
  t.is((await cat('gh/incr/guide/intro.md')).status, 404);
  const history = await versions('gh/incr/guide/welcome.md');
  t.deepEqual(history.map((v) => v.path), ['gh/incr/guide/welcome.md', 'gh/incr/guide/intro.md']);

  // The deleted file is in the trash, not gone.
  t.is((await cat('gh/incr/data/old.json')).status, 404);
  const trash = (await server.api('GET', `/content/${projectId}/trash`, { token })).body.data.items as { original_path: string }[];
  t.true(trash.some((i) => i.original_path === 'gh/incr/data/old.json'), JSON.stringify(trash));

  // Nothing changed: the branch head only, no commit.
  const v = server.running.services.changelog.latest(projectId);
  fake.seen.length = 0;
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, http_calls: 1 });
  t.deepEqual(calls(fake), ['GET /repos/octo/docs/branches/main']);
  t.is(server.running.services.changelog.latest(projectId), v);
});

test.serial('push: edits, a new file and a deletion made here go back as one commit (blobs, tree, commit, ref) with the run\'s message', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'site/a.md': 'A from GitHub\n', 'site/data.json': '{"x": 1}\n', 'site/gone.md': 'to delete\n', 'other.md': 'outside the synced folder\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/push', owner: 'octo', repo: 'docs', branch: 'main', repo_path: 'site' });
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 3 } });
  t.is((await cat('gh/push/other.md')).status, 404, 'only the repo_path folder is synced');

  await write('gh/push/a.md', 'A edited here\n', 'markdown');
  await write('gh/push/data.json', { x: 2 }, 'json');
  await write('gh/push/new.md', 'Made here\n', 'markdown');
  t.is((await server.api('POST', `/content/${projectId}/rm`, { token, body: { path: 'gh/push/gone.md' } })).status, 200);
  const head = fake.branches.get('main')!;
  const tree = rootTree(fake);
  fake.seen.length = 0;

  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 4, conflicts: [], error: null, errors: [] });

  const writes = fake.seen.filter((s) => s.method !== 'GET');
  t.deepEqual(writes.map((s) => `${s.method} ${s.path}`), [
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/trees',
    'POST /repos/octo/docs/git/commits',
    'PATCH /repos/octo/docs/git/refs/heads/main',
  ]);
  const sent = writes.slice(0, 3).map((s) => s.body as { content: string; encoding: string });
  t.true(sent.every((b) => b.encoding === 'base64'));
  t.deepEqual(sent.map((b) => Buffer.from(b.content, 'base64').toString('utf8')).sort(), ['A edited here\n', 'Made here\n', '{\n  "x": 2\n}\n']);
  const treeBody = writes[3]!.body as { base_tree: string; tree: { path: string; mode: string; type: string; sha: string | null }[] };
  t.is(treeBody.base_tree, tree);
  // Paths in the repository (under repo_path); a null sha removes the path.
  t.deepEqual(
    [...treeBody.tree].sort((a, b) => a.path.localeCompare(b.path)),
    [
      { path: 'site/a.md', mode: '100644', type: 'blob', sha: blobSha('A edited here\n') },
      { path: 'site/data.json', mode: '100644', type: 'blob', sha: blobSha('{\n  "x": 2\n}\n') },
      { path: 'site/gone.md', mode: '100644', type: 'blob', sha: null },
      { path: 'site/new.md', mode: '100644', type: 'blob', sha: blobSha('Made here\n') },
    ],
  );
  const commitBody = writes[4]!.body as { message: string; tree: string; parents: string[] };
  t.is(commitBody.message, `sync github: ${sync.name} (run ${run.id})`);
  t.deepEqual(commitBody.parents, [head]);
  const newHead = fake.branches.get('main')!;
  t.not(newHead, head);
  t.deepEqual(writes[5]!.body, { sha: newHead, force: false });
  t.is(fake.commits.get(newHead)!.message, commitBody.message);
  t.deepEqual(Object.keys(fake.filesAt()).sort(), ['other.md', 'site/a.md', 'site/data.json', 'site/new.md']);
  t.is(fake.textAt('site/a.md'), 'A edited here\n');
  t.is(fake.textAt('site/new.md'), 'Made here\n');
  t.is(fake.textAt('other.md'), 'outside the synced folder\n');
  for (const s of writes) t.is(s.headers.authorization, `Bearer ${GH_TOKEN}`);

  // What was pushed is not pulled back as a change, nor pushed again.
  const v = server.running.services.changelog.latest(projectId);
  fake.seen.length = 0;
  const after = await runOf(sync.id);
  t.like(after, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0, conflicts: [] });
  t.is(JSON.parse(after.cursor_after).commit, newHead);
  t.false(fake.seen.some((s) => s.method !== 'GET'));
  t.false(fake.seen.some((s) => s.path.includes('/git/blobs/')), 'the pushed blobs are known: nothing downloaded');
  t.is(server.running.services.changelog.latest(projectId), v);

  // The created file now belongs to the sync: an edit on GitHub reaches its node.
  const created = (await cat('gh/push/new.md')).body.data.id as string;
  fake.commit({ ...fake.filesAt(), 'site/new.md': 'Made here, edited on GitHub\n' });
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, conflicts: [] });
  t.like((await cat('gh/push/new.md')).body.data, { id: created, content: 'Made here, edited on GitHub\n' });
});

// A move alone (same content) is a local change too: GitHub gets the file under its new name.
test.serial('push: a file moved here is moved on GitHub (same blob, old path removed)', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'old-name.md': 'moving\n', 'stay.md': 'stays\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/move', owner: 'octo', repo: 'docs' });
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 2 } });
  t.is((await server.api('POST', `/content/${projectId}/mv`, { token, body: { old_path: 'gh/move/old-name.md', new_path: 'gh/move/new-name.md' } })).status, 200);
  fake.seen.length = 0;

  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', pushed: 1, conflicts: [] });
  const treeBody = fake.seen.find((s) => s.method === 'POST' && s.path.endsWith('/git/trees'))?.body as { tree: { path: string; sha: string | null }[] } | undefined;
  t.deepEqual(
    [...(treeBody?.tree ?? [])].sort((a, b) => a.path.localeCompare(b.path)).map((e) => [e.path, e.sha]),
    [
      ['new-name.md', blobSha('moving\n')],
      ['old-name.md', null],
    ],
  );
  t.deepEqual(Object.keys(fake.filesAt()).sort(), ['new-name.md', 'stay.md']);
});

test.serial('conflict: a file changed here and on GitHub: GitHub wins in the node, ours is in its history, the run lists the path', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'c.md': 'base\n', 'd.md': 'untouched\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/conflict', owner: 'octo', repo: 'docs' });
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 2 } });

  await write('gh/conflict/c.md', 'ours\n', 'markdown');
  fake.commit({ ...fake.filesAt(), 'c.md': 'theirs\n' });
  fake.seen.length = 0;

  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 0, conflicts: ['gh/conflict/c.md'] });
  t.is((await cat('gh/conflict/c.md')).body.data.content, 'theirs\n');
  // Newest first: GitHub's version by the sync, ours by the user before it, the first pull's.
  const history = await versions('gh/conflict/c.md');
  t.deepEqual(history.map((v) => v.actor_type), ['sync', 'user', 'sync']);
  const ours = await server.api('GET', `/content/${projectId}/version-content?path=gh/conflict/c.md&version=${history[1]!.version}`, { token });
  t.is(ours.body.data.content, 'ours\n');
  // The source won: nothing was sent back.
  t.false(fake.seen.some((s) => s.method !== 'GET'));
  t.is(fake.textAt('c.md'), 'theirs\n');
});

test.serial('rate limits: a 403 with x-ratelimit-remaining 0 and a 429 with Retry-After are waited out, and the run succeeds', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'r.md': 'r\n', 's.md': 's\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/limits', owner: 'octo', repo: 'docs' });
  // The primary limit resets at the next whole second (at most a second away).
  const reset = Math.floor(Date.now() / 1000) + 1;
  fake.interrupts.push({
    path: /\/branches\/main$/,
    status: 403,
    headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-used': '5000', 'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': 'core' },
    body: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
  });
  fake.interrupts.push({
    path: /\/git\/blobs\//,
    status: 429,
    headers: { 'retry-after': '1' },
    body: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits' },
  });
  const started = Date.now();
  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', error: null, pulled: { created: 2 } });
  t.true(run.rate_limited_ms >= 1000, `rate_limited_ms ${run.rate_limited_ms}`);
  t.true(Date.now() - started >= 1000, 'the run really waited');
  // Both refused requests were asked again, and every answer counts as a call.
  t.is(calls(fake).filter((c) => c === 'GET /repos/octo/docs/branches/main').length, 2);
  t.is(calls(fake).filter((c) => c.includes('/git/blobs/')).length, 3);
  t.is(run.http_calls, fake.seen.length);
  t.is((await cat('gh/limits/s.md')).body.data.content, 's\n');
});

// Last: it leaves the GitHub connection needing reauthorization until it connects again.
test.serial('a 401 fails the run, pauses the sync with needs_reauth and marks the connection; connecting again resumes from the cursor', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'x.md': 'x\n' });
  fake.intercept();
  const sync = await newSync({ path: '/gh/auth', owner: 'octo', repo: 'docs' });
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 1 } });

  fake.commit({ 'x.md': 'x2\n' });
  fake.interrupts.push({ path: /\/branches\//, status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' }, headers: {} });
  fake.seen.length = 0;
  const run = await runOf(sync.id);
  t.is(run.status, 'failed');
  t.regex(run.error, /GitHub refused the stored token.*authorized again/);
  // A personal token cannot be refreshed: one request, no retry.
  t.deepEqual(calls(fake), ['GET /repos/octo/docs/branches/main']);
  t.is((await cat('gh/auth/x.md')).body.data.content, 'x\n');
  const listed = (await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string }[];
  t.like(listed.find((s) => s.id === sync.id), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { connected: true, needs_reauth: true });
  t.is((await refresh(sync.id)).status, 409, 'a paused sync does not run');

  // A new token, the sync resumed: the run picks up from the stored cursor.
  nock.cleanAll();
  await connectGithub();
  fake.intercept();
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: false });
  t.is((await server.api('POST', `/sync/syncs/${sync.id}/resume`, { token })).status, 200);
  const again = await runOf(sync.id);
  t.like(again, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, cursor_before: run.cursor_after });
  t.is((await cat('gh/auth/x.md')).body.data.content, 'x2\n');
});
