import test from 'ava';
import nock from 'nock';
import { githubConnector } from '../../../src/platform/connectors/github.ts';
import type { LocalChange, SourceChange } from '../../../src/platform/runtime/connector.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { FakeGithub, GITHUB, issue } from './fixtures/github/fakeGithub.ts';

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const config = { path: 'repo', owner: 'octo', repo: 'docs' };
const upserts = (changes: SourceChange[]) =>
  Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, { id: c.item.sourceId, type: c.item.type, content: c.item.content }]] : [])));
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : []));
const calls = (fake: FakeGithub) => fake.seen.map((s) => `${s.method} ${s.path}${Object.keys(s.query).length ? `?${new URLSearchParams(s.query)}` : ''}`);

function repoFixture(): FakeGithub {
  const fake = new FakeGithub();
  fake.commit({
    'README.md': '# Docs\n',
    'guide/intro.md': 'Hello\n',
    'data/config.json': '{"a": 1, "list": [true, null]}',
    'data/broken.json': '{not json',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]),
    'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: '100755' },
    'latest': { content: 'README.md', mode: '120000' },
  });
  fake.intercept();
  return fake;
}

test.serial('first pull: every file of the default branch as a node, with the headers GitHub asks for', async (t) => {
  const fake = repoFixture();
  const h = harness(githubConnector, GITHUB, config);
  const run = await pullAll(githubConnector, h, null);

  const byPath = upserts(run.changes);
  t.deepEqual(Object.keys(byPath).sort(), ['README.md', 'bin/run.sh', 'data/broken.json', 'data/config.json', 'guide/intro.md', 'img/logo.png']);
  t.deepEqual(byPath['README.md'], { id: 'file:README.md', type: 'markdown', content: '# Docs\n' });
  t.deepEqual(byPath['data/config.json'], { id: 'file:data/config.json', type: 'json', content: { a: 1, list: [true, null] } });
  t.is(byPath['data/broken.json'].type, 'file', 'invalid JSON stays a file');
  t.deepEqual(byPath['img/logo.png'].content, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]));
  t.is(h.known.get('file:bin/run.sh')?.meta.mode as string, '100755');
  t.is(h.known.get('file:README.md')?.sourceVersion, h.known.get('file:README.md')?.meta.sha as string, 'the version is the blob sha');

  const head = fake.branches.get('main')!;
  t.deepEqual(calls(fake).slice(0, 3), ['GET /repos/octo/docs', 'GET /repos/octo/docs/branches/main', `GET /repos/octo/docs/git/trees/${fake.commits.get(head)!.tree}?recursive=1`]);
  t.is(calls(fake).filter((c) => c.includes('/git/blobs/')).length, 6, 'one blob per file; the symbolic link is left out');
  for (const s of fake.seen) {
    t.is(s.headers.authorization, `Bearer ${TOKEN}`);
    t.is(s.headers.accept, 'application/vnd.github+json');
    t.is(s.headers['x-github-api-version'], '2022-11-28');
  }
  t.is(JSON.parse(run.cursor!).commit, head);
});

test.serial('an unchanged branch costs one call and no change', async (t) => {
  const fake = repoFixture();
  const h = harness(githubConnector, GITHUB, config);
  const first = await pullAll(githubConnector, h, null);
  fake.seen.length = 0;
  const again = await pullAll(githubConnector, h, first.cursor);
  t.deepEqual(again.pages, []);
  t.deepEqual(calls(fake), ['GET /repos/octo/docs/branches/main'], 'the default branch is remembered in the cursor');
});

test.serial('incremental: only changed blobs are fetched; a rename keeps its source id; a delete is a delete', async (t) => {
  const fake = repoFixture();
  const h = harness(githubConnector, GITHUB, config);
  const first = await pullAll(githubConnector, h, null);
  const files = fake.filesAt();
  delete files['guide/intro.md'];
  files['guide/welcome.md'] = Buffer.from('Hello\n'); // renamed, same content
  files['README.md'] = Buffer.from('# Docs, edited\n');
  delete files['data/broken.json'];
  files['notes/new.md'] = Buffer.from('new\n');
  fake.commit({ ...files, 'bin/run.sh': { content: files['bin/run.sh'], mode: '100755' }, latest: { content: 'README.md', mode: '120000' } });
  fake.seen.length = 0;

  const run = await pullAll(githubConnector, h, first.cursor);
  t.deepEqual(upserts(run.changes), {
    'README.md': { id: 'file:README.md', type: 'markdown', content: '# Docs, edited\n' },
    'guide/welcome.md': { id: 'file:guide/intro.md', type: 'markdown', content: 'Hello\n' },
    'notes/new.md': { id: 'file:notes/new.md', type: 'markdown', content: 'new\n' },
  });
  t.deepEqual(deletes(run.changes), ['file:data/broken.json']);
  const blobCalls = calls(fake).filter((c) => c.includes('/git/blobs/'));
  t.is(blobCalls.length, 3, 'the edited, renamed and new files only');
  t.is(calls(fake).length, 2 + blobCalls.length, 'branch + one recursive tree + the blobs');

  // A new file where a renamed one was first seen gets a source id of its own.
  const later = fake.filesAt();
  later['guide/intro.md'] = Buffer.from('a different intro\n');
  fake.commit({ ...later, 'bin/run.sh': { content: later['bin/run.sh'], mode: '100755' } });
  const third = await pullAll(githubConnector, h, run.cursor);
  const added = third.changes.find((c) => c.kind === 'upsert' && c.item.path === 'guide/intro.md');
  t.regex(added?.kind === 'upsert' ? added.item.sourceId : '', /^file:guide\/intro\.md@[0-9a-f]{12}$/);
  t.is(h.known.get('file:guide/intro.md')?.path, 'guide/welcome.md');
});

test.serial('repo_path and branch: the folder is found level by level; a truncated tree is read sub-tree by sub-tree', async (t) => {
  const fake = new FakeGithub();
  fake.commit({ 'site/content/a.md': 'A', 'site/content/deep/b.md': 'B', 'site/other.md': 'no', 'top.md': 'no' }, 'c1', 'release');
  fake.truncateRecursive = true;
  fake.intercept();
  const h = harness(githubConnector, GITHUB, { ...config, branch: 'release', repo_path: '/site/content/' });
  const run = await pullAll(githubConnector, h, null);
  t.deepEqual(Object.keys(upserts(run.changes)).sort(), ['a.md', 'deep/b.md']);
  const trees = calls(fake).filter((c) => c.includes('/git/trees/'));
  t.is(trees.length, 3, 'root and site (one level each), then the recursive listing of content');
  t.false(calls(fake).includes('GET /repos/octo/docs'), 'a configured branch needs no repository call');

  // Now the root itself is huge: the recursive answer is truncated, so levels are read one by one.
  const big = new FakeGithub();
  big.commit({ 'a.md': 'A', 'x/y/z.md': 'Z' });
  big.truncateRecursive = true;
  nock.cleanAll();
  big.intercept();
  const h2 = harness(githubConnector, GITHUB, config);
  const run2 = await pullAll(githubConnector, h2, null);
  t.deepEqual(Object.keys(upserts(run2.changes)).sort(), ['a.md', 'x/y/z.md']);
});

test.serial('issues and pull requests: Markdown with front matter, Link pagination, then only what was updated since', async (t) => {
  const fake = repoFixture();
  fake.issues = Array.from({ length: 120 }, (_, i) =>
    issue({ id: 9000 + i, number: i + 1, title: `Issue "${i + 1}"`, updated: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString().replace('.000', ''), pull: i % 10 === 0, labels: ['bug'], assignees: ['ada'], body: i === 1 ? 'Steps:\r\n1. run' : undefined }),
  );
  const h = harness(githubConnector, GITHUB, { ...config, include_issues: true, include_pulls: true });
  const first = await pullAll(githubConnector, h, null);
  const items = upserts(first.changes);
  t.is(Object.keys(items).filter((p) => p.startsWith('_issues/')).length, 108);
  t.is(Object.keys(items).filter((p) => p.startsWith('_pulls/')).length, 12);
  t.is(
    items['_issues/2.md'].content,
    [
      '---',
      'number: 2',
      'title: "Issue \\"2\\""',
      'state: open',
      'author: "octocat"',
      'labels: ["bug"]',
      'assignees: ["ada"]',
      'created: 2024-01-02T03:04:05Z',
      'updated: 2024-01-01T00:01:00Z',
      'closed: null',
      'url: https://github.com/octo/docs/issues/2',
      '---',
      'Steps:',
      '1. run',
      '',
    ].join('\n'),
  );
  t.true(String(items['_pulls/1.md'].content).includes('draft: false\nmerged: null\n'));
  t.is(items['_issues/2.md'].id, 'issue:9001');
  const issueCalls = fake.seen.filter((s) => s.path.endsWith('/issues'));
  t.is(issueCalls.length, 2, 'two pages of 100');
  t.deepEqual(issueCalls[0].query, { state: 'all', sort: 'updated', direction: 'asc', per_page: '100' });
  t.is(issueCalls[1].query.page, '2', 'the second page is the Link header\'s next');

  fake.issues[5] = { ...fake.issues[5], title: 'Renamed', updated_at: '2024-02-01T00:00:00Z' };
  fake.seen.length = 0;
  const second = await pullAll(githubConnector, h, first.cursor);
  t.deepEqual(Object.keys(upserts(second.changes)), ['_issues/6.md']);
  t.deepEqual(fake.seen.map((s) => [s.path, s.query.since]), [
    ['/repos/octo/docs/branches/main', undefined],
    ['/repos/octo/docs/issues', '2024-01-01T01:58:59Z'],
  ], 'since: the newest update seen, less a second');

  // Turning pull requests off removes them.
  h.ctx.config = { ...config, include_issues: true, include_pulls: false };
  const third = await pullAll(githubConnector, h, second.cursor);
  t.is(deletes(third.changes).length, 12);
});

test.serial('rate limits: a 403 with no calls left waits until x-ratelimit-reset; a 429 waits its retry-after', async (t) => {
  const fake = repoFixture();
  const now = Date.now();
  fake.interrupts.push({
    path: /\/branches\//,
    status: 403,
    headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(now / 1000) + 30) },
    body: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
  });
  fake.interrupts.push({ path: /\/git\/trees\//, status: 429, headers: { 'retry-after': '7' }, body: { message: 'You have exceeded a secondary rate limit.' } });
  const h = harness(githubConnector, GITHUB, config);
  const run = await pullAll(githubConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 6);
  t.is(h.sleeps.length, 2);
  t.true(h.sleeps[0] > 25_000 && h.sleeps[0] <= 30_000, `waited ${h.sleeps[0]} ms`);
  t.is(h.sleeps[1], 7000);

  // A 403 that is not a rate limit is the provider's refusal, with its message.
  nock.cleanAll();
  const denied = repoFixture();
  denied.interrupts.push({ path: /\/branches\//, status: 403, headers: {}, body: { message: 'Resource not accessible by personal access token' } });
  const h2 = harness(githubConnector, GITHUB, config);
  await t.throwsAsync(pullAll(githubConnector, h2, null), { message: /github answered 403: Resource not accessible by personal access token/ });
});

/** A local change, as the runtime offers it. */
function update(h: ReturnType<typeof harness>, sourceId: string, content: unknown, path?: string): LocalChange {
  const known = h.known.get(sourceId)!;
  return { kind: 'update', sourceId, known, path: path ?? known.path, type: known.path.endsWith('.json') ? 'json' : 'markdown', content, previous: null };
}

test.serial('push: edits, a move, a new file and a delete go back as ONE commit with the run message', async (t) => {
  const fake = repoFixture();
  const h = harness(githubConnector, GITHUB, config);
  await pullAll(githubConnector, h, null);
  const head = fake.branches.get('main')!;
  fake.seen.length = 0;

  const outcomes = await githubConnector.push!(h.ctx, [
    update(h, 'file:README.md', '# Docs, from cns\n'),
    update(h, 'file:data/config.json', { a: 2 }),
    update(h, 'file:guide/intro.md', 'Hello\n', 'guide/start.md'),
    { kind: 'create', path: 'notes/today.md', type: 'markdown', content: 'today\n' },
    { kind: 'delete', sourceId: 'file:img/logo.png', known: h.known.get('file:img/logo.png')! },
  ]);
  t.true(outcomes.every((o) => o.ok), JSON.stringify(outcomes));
  t.deepEqual(outcomes.map((o) => o.ok && [o.sourceId, o.path]), [
    ['file:README.md', 'README.md'],
    ['file:data/config.json', 'data/config.json'],
    ['file:guide/intro.md', 'guide/start.md'],
    ['file:notes/today.md', 'notes/today.md'],
    ['file:img/logo.png', undefined],
  ]);

  const headTree = fake.commits.get(head)!.tree;
  t.deepEqual(calls(fake), [
    'GET /repos/octo/docs',
    'GET /repos/octo/docs/branches/main',
    `GET /repos/octo/docs/git/trees/${headTree}?recursive=1`,
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/blobs',
    'POST /repos/octo/docs/git/trees',
    'POST /repos/octo/docs/git/commits',
    'PATCH /repos/octo/docs/git/refs/heads/main',
  ]);
  const blobBodies = fake.seen.filter((s) => s.path.endsWith('/git/blobs')).map((s) => s.body as { content: string; encoding: string });
  t.deepEqual(blobBodies[1], { content: Buffer.from('{\n  "a": 2\n}\n').toString('base64'), encoding: 'base64' });
  const tree = fake.seen.find((s) => s.path.endsWith('/git/trees'))!.body as { base_tree: string; tree: { path: string; sha: string | null; mode: string }[] };
  t.is(tree.base_tree, headTree);
  t.deepEqual(tree.tree.map((e) => [e.path, e.sha === null ? null : 'sha', e.mode]), [
    ['README.md', 'sha', '100644'],
    ['data/config.json', 'sha', '100644'],
    ['guide/intro.md', null, '100644'],
    ['guide/start.md', 'sha', '100644'],
    ['notes/today.md', 'sha', '100644'],
    ['img/logo.png', null, '100644'],
  ]);
  const commit = fake.seen.find((s) => s.path.endsWith('/git/commits'))!.body as { message: string; parents: string[] };
  t.is(commit.message, 'sync github: test run');
  t.deepEqual(commit.parents, [head]);
  t.is((fake.seen.at(-1)!.body as { force: boolean }).force, false);

  t.is(fake.textAt('README.md'), '# Docs, from cns\n');
  t.is(fake.textAt('guide/start.md'), 'Hello\n');
  t.is(fake.textAt('guide/intro.md'), undefined);
  t.is(fake.textAt('img/logo.png'), undefined);
  t.is(fake.textAt('notes/today.md'), 'today\n');

  // The versions returned are GitHub's blob shas: the next pull finds nothing to fetch.
  for (const o of outcomes) if (o.ok && o.meta) h.known.items.set(o.sourceId, { sourceId: o.sourceId, path: o.path!, sourceVersion: o.sourceVersion, meta: o.meta });
  h.known.items.delete('file:img/logo.png');
  fake.seen.length = 0;
  const after = await pullAll(githubConnector, h, null);
  t.deepEqual(after.changes, []);
  t.false(calls(fake).some((c) => c.includes('/git/blobs/')));
});

test.serial('push: a file changed on GitHub since the last sync is refused; a branch that moved refuses the commit', async (t) => {
  const fake = repoFixture();
  const h = harness(githubConnector, GITHUB, config);
  await pullAll(githubConnector, h, null);
  const files = fake.filesAt();
  fake.commit({ ...files, 'bin/run.sh': { content: files['bin/run.sh'], mode: '100755' }, 'README.md': '# changed on GitHub\n' });

  const outcomes = await githubConnector.push!(h.ctx, [update(h, 'file:README.md', '# ours\n'), update(h, 'file:guide/intro.md', 'ours\n')]);
  t.deepEqual(outcomes[0], { ok: false, message: 'README.md changed on GitHub since the last sync: the next pull brings GitHub\'s version' });
  t.true(outcomes[1].ok, 'the other change still goes');
  t.is(fake.textAt('guide/intro.md'), 'ours\n');
  t.is(fake.textAt('README.md'), '# changed on GitHub\n');

  fake.refuseNextRefUpdate = true;
  const before = fake.branches.get('main');
  const refused = await githubConnector.push!(h.ctx, [{ kind: 'create', path: 'late.md', type: 'markdown', content: 'x' }]);
  t.false(refused[0].ok);
  t.regex(refused[0].ok ? '' : refused[0].message, /moved on GitHub during the push \(not a fast-forward\)/);
  t.is(fake.branches.get('main'), before);

  const issueKnown = { sourceId: 'issue:1', path: '_issues/1.md', sourceVersion: '2024-01-01T00:00:00Z', meta: { kind: 'issue', number: 1 } };
  const other = await githubConnector.push!(h.ctx, [
    { kind: 'create', path: 'a/../b.md', type: 'markdown', content: 'x' },
    { kind: 'update', sourceId: 'issue:1', known: issueKnown, path: '_issues/1.md', type: 'markdown', content: 'edited', previous: null },
  ]);
  t.deepEqual(other, [
    { ok: false, message: '"a/../b.md" cannot be written to the repository' },
    { ok: false, message: 'issues and pull requests are read-only here: change them on GitHub' },
  ]);
});

test.serial('config: owner and repo are checked; repo_path may not climb', (t) => {
  t.notThrows(() => githubConnector.validateConfig!({ owner: 'octo', repo: 'docs.site', branch: 'feature/x', repo_path: 'docs' }));
  t.throws(() => githubConnector.validateConfig!({ owner: 'octo/evil', repo: 'docs' }), { message: /owner/ });
  t.throws(() => githubConnector.validateConfig!({ owner: 'octo', repo: '' }), { message: /repo/ });
  t.throws(() => githubConnector.validateConfig!({ owner: 'octo', repo: 'docs', repo_path: '../x' }), { message: /repo_path/ });
  t.throws(() => githubConnector.validateConfig!({ owner: 'octo', repo: 'docs', branch: 'a..b' }), { message: /branch/ });
  t.throws(() => githubConnector.validateConfig!({ owner: 'octo', repo: 'docs', include_issues: 'yes' }), { message: /include_issues/ });
});

