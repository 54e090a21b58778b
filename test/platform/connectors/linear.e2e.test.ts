import test from 'ava';
import nock from 'nock';
import { readFileSync } from 'node:fs';
import { issueJson } from '../../../src/platform/connectors/linear/issueItems.ts';
import type { LinearIssue } from '../../../src/platform/connectors/linear/queries.ts';
import { ADMIN, isolateNetwork, startOAuthServer, type OAuthTestServer } from '../oauth/helpers.ts';
import { FakeLinear } from './fixtures/linear/fakeLinear.ts';

// The Linear connector end to end: a real server and runtime, the real connector, Linear's
// GraphQL API on nock (FakeLinear). The tests run in order on one sync: each starts from where
// the one before left the workspace and the project.

const KEY = 'lin_api_e2ePersonalKey0001';
const FOLDER = 'linear';
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/linear/${name}`, import.meta.url), 'utf8'));

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const linear = new FakeLinear();
/** The issues the tests name (the rest fill the first listing past one page). */
let crash: LinearIssue;
let slow: LinearIssue;
let dark: LinearIssue;

const refresh = async () => {
  const res = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const content = async (path: string) => {
  const res = await cat(path);
  if (res.status !== 200) throw new Error(`cat ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.content;
};
const versions = async (path: string) => (await server.api('GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}`, { token })).body.data.versions as { version: number }[];
const versionContent = async (path: string, version: number) =>
  (await server.api('GET', `/content/${projectId}/version-content?path=${encodeURIComponent(path)}&version=${version}`, { token })).body.data.content;
const write = async (path: string, value: unknown, nodeType: 'json' | 'markdown') => {
  const res = await server.api('POST', `/content/${projectId}/write`, { token, body: { path, content: value, node_type: nodeType } });
  if (res.status >= 300) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
};
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/linear/status?project_id=${projectId}`, { token })).body.data;
const connect = () => server.api('POST', '/oauth/linear/token', { token, body: { project_id: projectId, token: KEY } });
const issuePath = (identifier: string, ext: 'json' | 'md') => `${FOLDER}/issues/${identifier}.${ext}`;

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  linear.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('a personal API key is checked bare in Authorization; the first full pull writes one JSON and one Markdown node per issue, a commit per page', async (t) => {
  crash = linear.add({ title: 'Crash on start', description: 'Steps:\n\n1. open the app\n2. see it fail\n' });
  slow = linear.add({ title: 'Slow search', description: null, assignee: null });
  dark = linear.add({ title: 'Dark mode' });
  // 101 issues in the project: Linear's page of 100 and one more.
  for (let i = 0; i < 98; i++) linear.add({ title: `Filler ${i}` });
  const outside = linear.add({ title: 'Not in the project', project: false });

  const connected = await connect();
  t.is(connected.status, 201, JSON.stringify(connected.body));
  t.like(connected.body.data, { provider: 'linear', kind: 'token', account: 'ada@example.com' });
  t.deepEqual(linear.seen.map((s) => [s.operation, s.auth]), [['viewer', KEY]]);

  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'linear', config: { path: `/${FOLDER}`, project_id: linear.project.id } } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  linear.seen.length = 0;
  const before = server.running.services.changelog.latest(projectId);
  const run = await refresh();
  const newest = [...linear.issues.values()].filter((i) => i.project).at(-1)!.updatedAt;
  t.like(run, { status: 'succeeded', trigger: 'manual', pulled: { created: 202, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, http_calls: 2, rate_limited_ms: 0, cursor_before: null, cursor_after: newest });

  // Two pages of the project's issues, the key bare (Linear refuses a personal key as Bearer).
  const filter = { project: { id: { eq: linear.project.id } } };
  t.deepEqual(
    linear.seen.map((s) => [s.operation, s.auth, s.variables]),
    [
      ['CnsIssues', KEY, { filter, first: 100, after: null, includeArchived: false }],
      ['CnsIssues', KEY, { filter, first: 100, after: linear.seen[1]!.variables.after, includeArchived: false }],
    ],
  );
  t.truthy(linear.seen[1]!.variables.after);
  t.deepEqual(linear.seen.map((s) => s.answered!.length), [100, 1]);

  // One commit per page, both by the sync.
  const after = server.running.services.changelog.latest(projectId);
  t.is(after - before, 2);
  const entries = server.running.services.changelog.between(projectId, before, after);
  t.is(entries.filter((e) => e.nodeType !== 'folder').length, 202);
  t.true(entries.every((e) => e.actor.type === 'sync' && e.actor.id === syncId));

  t.deepEqual(await content(issuePath('ENG-1', 'json')), {
    id: crash.id,
    identifier: 'ENG-1',
    title: 'Crash on start',
    state: { name: 'Todo', type: 'unstarted' },
    assignee: { id: '5b2a7e01-user-ada', name: 'Ada Lovelace', email: 'ada@example.com' },
    priority: 2,
    labels: [{ id: '0a7f3b2c-label-bug', name: 'Bug' }],
    project: { id: linear.project.id, name: 'Launch' },
    cycle: null,
    team: { id: '8a6b1c2d-team-eng', key: 'ENG' },
    estimate: null,
    dueDate: null,
    createdAt: crash.createdAt,
    updatedAt: crash.updatedAt,
    url: crash.url,
  });
  t.is(await content(issuePath('ENG-1', 'md')), 'Steps:\n\n1. open the app\n2. see it fail\n');
  // No description: an empty Markdown node; no assignee: null.
  t.is(await content(issuePath('ENG-2', 'md')), '');
  t.is((await content(issuePath('ENG-2', 'json'))).assignee, null);
  t.is((await content(issuePath('ENG-101', 'json'))).title, 'Filler 97');
  t.is((await cat(issuePath(outside.identifier, 'json'))).status, 404);
});

test.serial('an incremental run asks only for issues updated since the cursor: an edit is rewritten, a new identifier is a move, an archived issue goes to the trash', async (t) => {
  const cursor = (await server.api('GET', `/sync/syncs/${syncId}/runs`, { token })).body.data.runs[0].cursor_after as string;
  const darkNode = (await cat(issuePath('ENG-3', 'json'))).body.data.id as string;
  const darkText = (await cat(issuePath('ENG-3', 'md'))).body.data.id as string;
  linear.edit(crash.id, { title: 'Crash on start (fixed title)' });
  // Moved to the OPS team, still in the project: a new identifier, so new paths.
  linear.moveToTeam(dark.id, 'OPS');
  linear.archive(slow.id);
  linear.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 3, deleted: 2 }, conflicts: [], http_calls: 2, cursor_before: cursor, cursor_after: linear.issues.get(slow.id)!.updatedAt });
  t.deepEqual(
    linear.seen.map((s) => [s.operation, s.variables]),
    [
      ['CnsIssues', { filter: { project: { id: { eq: linear.project.id } }, updatedAt: { gt: cursor } }, first: 100, after: null, includeArchived: true }],
      // Issues the sync holds that left the project since the cursor: ids only.
      ['CnsIssueIds', { filter: { or: [{ project: { null: true } }, { project: { id: { neq: linear.project.id } } }], updatedAt: { gt: cursor } }, first: 250, after: null }],
    ],
  );
  // Only the three changed issues came back, not the 98 others.
  t.deepEqual(linear.seen[0]!.answered, ['ENG-1', 'OPS-7', 'ENG-2']);

  t.is((await content(issuePath('ENG-1', 'json'))).title, 'Crash on start (fixed title)');
  // The moved issue keeps its nodes (same ids, history kept) at the new identifier's paths.
  const moved = await cat(issuePath('OPS-7', 'json'));
  t.is(moved.body.data.id, darkNode);
  t.like(moved.body.data.content, { identifier: 'OPS-7', team: { key: 'OPS' } });
  t.is((await cat(issuePath('OPS-7', 'md'))).body.data.id, darkText);
  t.is((await cat(issuePath('ENG-3', 'json'))).status, 404);
  t.true((await versions(issuePath('OPS-7', 'json'))).length >= 2);
  t.true((await versions(issuePath('OPS-7', 'md'))).length >= 2);

  // The archived issue's two nodes are in the trash.
  t.is((await cat(issuePath('ENG-2', 'json'))).status, 404);
  const trash = await server.api('GET', `/content/${projectId}/trash`, { token });
  const trashed = JSON.stringify(trash.body.data.items);
  t.true(trashed.includes('ENG-2.json') && trashed.includes('ENG-2.md'), trashed);
});

test.serial('push: title, state and assignee edits go back in one issueUpdate, the description in another; what was pushed does not come back as a conflict', async (t) => {
  const path = issuePath('ENG-1', 'json');
  const node = await content(path);
  await write(path, { ...node, title: 'Crash on launch', state: { name: 'In Progress', type: 'unstarted' }, assignee: { ...node.assignee, email: 'grace@example.com' } }, 'json');
  await write(issuePath('ENG-1', 'md'), 'Rewritten **here**.\n', 'markdown');
  linear.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 2, conflicts: [], error: null });
  const mutations = linear.seen.filter((s) => s.operation === 'CnsIssueUpdate');
  t.is(mutations.length, 2);
  t.deepEqual(
    mutations.find((m) => 'title' in m.variables.input)!.variables,
    { id: crash.id, input: { title: 'Crash on launch', stateId: '4c1e0d7a-state-eng-progress', assigneeId: '5b2a7e01-user-grace' } },
  );
  t.deepEqual(mutations.find((m) => 'description' in m.variables.input)!.variables, { id: crash.id, input: { description: 'Rewritten **here**.\n' } });
  // The state by name among the team's states, the assignee by email.
  t.deepEqual(linear.seen.find((s) => s.operation === 'CnsTeamStates')!.variables, { id: '8a6b1c2d-team-eng' });
  t.deepEqual(linear.seen.find((s) => s.operation === 'CnsUserByEmail')!.variables, { email: 'grace@example.com' });
  t.true(mutations.every((m) => m.auth === KEY));
  t.like(linear.issues.get(crash.id), { title: 'Crash on launch', description: 'Rewritten **here**.\n', state: { name: 'In Progress' }, assignee: { name: 'Grace Hopper' } });

  // The next run brings Linear's own form of the issue (its state type, the assignee's name) without conflict or push.
  linear.seen.length = 0;
  const next = await refresh();
  t.like(next, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 0, conflicts: [] });
  t.false(linear.seen.some((s) => s.operation === 'CnsIssueUpdate'));
  t.like(await content(path), { title: 'Crash on launch', state: { name: 'In Progress', type: 'started' }, assignee: { id: '5b2a7e01-user-grace', name: 'Grace Hopper' } });
  t.is(await content(issuePath('ENG-1', 'md')), 'Rewritten **here**.\n');
});

test.serial('a conflict: an issue edited here and in Linear takes Linear\'s version; ours is the version before it', async (t) => {
  const path = issuePath('ENG-1', 'json');
  await write(path, { ...(await content(path)), title: 'Our title' }, 'json');
  linear.edit(crash.id, { title: 'Their title' });
  linear.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 0, conflicts: [path] });
  // Settled for the source: our title is not sent back.
  t.false(linear.seen.some((s) => s.operation === 'CnsIssueUpdate'));
  t.is(linear.issues.get(crash.id)!.title, 'Their title');
  t.deepEqual(await content(path), issueJson(linear.issues.get(crash.id)!));
  const history = await versions(path);
  t.is((await versionContent(path, history.length - 1)).title, 'Our title');

  // The description is a node of its own, versioned by its text: a title changed in Linear
  // while the description was edited here is no conflict; the edit goes back.
  await write(issuePath('ENG-1', 'md'), 'Edited here again.\n', 'markdown');
  linear.edit(crash.id, { title: 'Their title, again' });
  linear.seen.length = 0;
  const both = await refresh();
  t.like(both, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 1, conflicts: [] });
  t.deepEqual(linear.seen.filter((s) => s.operation === 'CnsIssueUpdate').map((s) => s.variables), [{ id: crash.id, input: { description: 'Edited here again.\n' } }]);
  t.is((await content(path)).title, 'Their title, again');
  t.is(await content(issuePath('ENG-1', 'md')), 'Edited here again.\n');
});

test.serial('Linear\'s rate limit (400 RATELIMITED) is waited out until the budget resets, and the run succeeds', async (t) => {
  linear.edit(crash.id, { priority: 1 });
  // The requests budget refills 400 ms after the answer (X-RateLimit-Requests-Reset is in epoch ms).
  linear.interrupts.push({
    status: 400,
    body: fixture('error-ratelimited.json'),
    headers: () => ({ 'x-ratelimit-requests-limit': '1500', 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(Date.now() + 400) }),
  });
  linear.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { updated: 1 }, error: null, http_calls: 3 });
  // About the 400 ms asked (measured, so a busy machine may add to it).
  t.true(run.rate_limited_ms >= 300 && run.rate_limited_ms < 5000, String(run.rate_limited_ms));
  // The limited query was asked again, the same.
  t.deepEqual(linear.seen[0]!.variables, linear.seen[1]!.variables);
  t.is((await content(issuePath('ENG-1', 'json'))).priority, 1);
});

test.serial('a 401 fails the run, pauses the sync for reauthorization and marks the connection; connecting again and resuming picks up', async (t) => {
  linear.edit(crash.id, { priority: 3 });
  linear.interrupts.push({ status: 401, body: fixture('error-authentication.json') });
  const run = await refresh();
  t.is(run.status, 'failed');
  t.regex(run.error, /linear.*(authorized|connect) again/i);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 409);
  t.is((await content(issuePath('ENG-1', 'json'))).priority, 1);

  t.is((await connect()).status, 200);
  t.like(await oauthStatus(), { needs_reauth: false });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/resume`, { token })).status, 200);
  t.like(await refresh(), { status: 'succeeded', pulled: { updated: 1 } });
  t.is((await content(issuePath('ENG-1', 'json'))).priority, 3);
});

// Linear refuses a key with HTTP 400 and AUTHENTICATION_ERROR: the connector's `isUnauthorized`
// tells the runtime, which handles it like a 401.
test.serial('a 400 AUTHENTICATION_ERROR answer (how Linear refuses a key) pauses the sync for reauthorization like a 401', async (t) => {
  linear.edit(crash.id, { priority: 4 });
  linear.interrupts.push({ status: 400, body: fixture('error-authentication.json') });
  const run = await refresh();
  t.is(run.status, 'failed');
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { needs_reauth: true });
});
