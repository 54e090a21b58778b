import test from 'ava';
import nock from 'nock';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen as ProviderSeen } from '../oauth/helpers.ts';
import { FakeNotion, NOTION, text } from './fixtures/notion/fakeNotion.ts';

// The Notion connector end to end: a real server running the real connector through the sync
// runtime, connected with an internal integration token, against a workspace on nock
// (FakeNotion, Notion's wire format). Runs go through the refresh route; content is read
// through the API.

const NOTION_TOKEN = 'ntn_e2eIntegrationSecret0001';
const ROOT = '11111111-1111-4111-8111-111111111111';
const DB = '22222222-2222-4222-8222-222222222222';

let server: OAuthTestServer;
let token: string;
let projectId: string;
/** The token check Notion received when the project connected (in test.before). */
let validation: ProviderSeen;

/** Connects Notion with the integration token; returns the validation request Notion received. */
async function connectNotion(): Promise<ProviderSeen> {
  const seen: ProviderSeen[] = [];
  nock(NOTION)
    .get('/v1/users/me')
    .reply(recorder(seen, () => [200, { object: 'user', id: 'bot-1', name: 'CNS sync', type: 'bot', bot: { owner: { type: 'workspace', workspace: true }, workspace_name: 'Acme' } }]));
  const res = await server.api('POST', '/oauth/notion/token', { token, body: { project_id: projectId, token: NOTION_TOKEN } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
  return seen[0]!;
}

/** Handbook (the root) → Onboarding → Day one, and Policies; a page outside the root; a database of tasks. */
function workspace() {
  const fake = new FakeNotion();
  fake.addPage({ id: ROOT, title: 'Handbook', parent: { type: 'workspace', workspace: true } });
  fake.setContent(ROOT, [fake.paragraph(ROOT, 'Welcome to the handbook.')]);
  const onboarding = fake.addPage({ title: 'Onboarding', parent: { type: 'page_id', page_id: ROOT } });
  fake.setContent(onboarding, [
    fake.block('heading_2', { rich_text: [text('First week')], is_toggleable: false, color: 'default' }, onboarding),
    fake.block('to_do', { rich_text: [text('Get a laptop')], checked: true, color: 'default' }, onboarding),
  ]);
  const dayOne = fake.addPage({ title: 'Day one', parent: { type: 'page_id', page_id: onboarding } });
  fake.setContent(dayOne, [fake.paragraph(dayOne, 'Coffee first.')]);
  const policies = fake.addPage({ title: 'Policies', parent: { type: 'page_id', page_id: ROOT } });
  fake.setContent(policies, [fake.paragraph(policies, 'Be kind.')]);
  const outside = fake.addPage({ title: 'Private diary', parent: { type: 'workspace', workspace: true } });
  fake.setContent(outside, [fake.paragraph(outside, 'Not for the sync.')]);
  fake.addDatabase({
    id: DB,
    title: 'Tasks',
    properties: {
      Name: { id: 'title', name: 'Name', type: 'title', title: {} },
      Points: { id: 'pts', name: 'Points', type: 'number', number: { format: 'number' } },
      Stage: { id: 'stg', name: 'Stage', type: 'select', select: { options: [{ id: 's1', name: 'Todo', color: 'gray' }, { id: 's2', name: 'Done', color: 'green' }] } },
    },
  });
  const row = (title: string, points: number) =>
    fake.addPage({
      title,
      parent: { type: 'database_id', database_id: DB },
      properties: {
        Name: { id: 'title', type: 'title', title: [text(title)] },
        Points: { id: 'pts', type: 'number', number: points },
        Stage: { id: 'stg', type: 'select', select: { id: 's1', name: 'Todo', color: 'gray' } },
      },
    });
  const rows = { writeDocs: row('Write docs', 3), ship: row('Ship', 5) };
  fake.intercept();
  return { fake, onboarding, dayOne, policies, outside, rows };
}

/** The sync's config as a person gives it: the root page's address, the database's id without dashes. */
const configFor = (path: string) => ({ path, root_page_id: `https://www.notion.so/acme/Handbook-${ROOT.replace(/-/g, '')}`, database_ids: [DB.replace(/-/g, '')] });

async function newSync(config: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'notion', config } });
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
const calls = (fake: FakeNotion) => fake.seen.map((s) => `${s.method} ${s.path}`);
/** The text of a block's rich text (answer form with plain_text, or the request form a created block keeps). */
const blockText = (b: Record<string, unknown>) =>
  ((b[String(b.type)] as { rich_text?: { plain_text?: string; text?: { content: string } }[] }).rich_text ?? []).map((r) => r.plain_text ?? r.text?.content ?? '').join('');

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  // Every test needs the connection; the first one checks how it was made.
  validation = await connectNotion();
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connect with an integration token, bootstrap with a root page and a database, first full pull: pages as Markdown, rows as JSON, one sync commit', async (t) => {
  t.is(validation.headers.get('authorization'), `Bearer ${NOTION_TOKEN}`);
  t.is(validation.headers.get('notion-version'), '2022-06-28');
  t.like((await server.api('GET', `/oauth/notion/status?project_id=${projectId}`, { token })).body.data, { connected: true, kind: 'token', account: 'Acme', needs_reauth: false });

  const w = workspace();
  // The connector's own config rules apply at bootstrap.
  const none = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'notion', config: { path: '/nt/first' } } });
  t.is(none.status, 422, JSON.stringify(none.body));
  t.regex(none.body.message, /give root_page_id/);
  const bad = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'notion', config: { path: '/nt/first', database_ids: ['nope'] } } });
  t.is(bad.status, 422);
  t.is(bad.body.message, '"nope" is not a Notion database id (32 hexadecimal digits, as in its address)');

  const sync = await newSync(configFor('/nt/first'));
  const before = server.running.services.changelog.latest(projectId);
  const res = await refresh(sync.id);
  t.is(res.status, 200, JSON.stringify(res.body));
  assertDocumented(t, server.running.services, 'post', '/sync/syncs/{syncId}/refresh', res);
  const run = res.body.data.run;
  t.like(run, { status: 'succeeded', trigger: 'manual', pulled: { created: 6, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, cursor_before: null, rate_limited_ms: 0 });
  t.true(run.http_calls > 0);
  t.is(run.http_calls, w.fake.seen.length);
  t.is(JSON.parse(run.cursor_after).dbs[DB].folder, 'Tasks');
  for (const s of w.fake.seen) {
    t.is(s.headers.authorization, `Bearer ${NOTION_TOKEN}`);
    t.is(s.headers['notion-version'], '2022-06-28');
  }
  t.false(calls(w.fake).includes(`GET /v1/blocks/${w.outside}/children`), 'no content is fetched for a page outside the root');

  // Six items under a hundred per page: one commit, made by the sync.
  t.is(server.running.services.changelog.latest(projectId) - before, 1);
  const feed = server.running.services.changelog.between(projectId, before, before + 1);
  t.true(feed.every((e) => e.actor.type === 'sync' && e.actor.id === sync.id));
  // The folders on the way are created in the same commit.
  t.deepEqual(feed.filter((e) => e.nodeType !== 'folder').map((e) => [e.path, e.nodeType]).sort(), [
    ['nt/first/Handbook.md', 'markdown'],
    ['nt/first/Handbook/Onboarding.md', 'markdown'],
    ['nt/first/Handbook/Onboarding/Day one.md', 'markdown'],
    ['nt/first/Handbook/Policies.md', 'markdown'],
    ['nt/first/Tasks/Ship.json', 'json'],
    ['nt/first/Tasks/Write docs.json', 'json'],
  ]);

  t.like((await cat('nt/first/Handbook.md')).body.data, {
    type: 'markdown',
    content: 'Welcome to the handbook.\n\n[Onboarding](Handbook/Onboarding.md)\n\n[Policies](Handbook/Policies.md)\n',
  });
  t.like((await cat('nt/first/Handbook/Onboarding.md')).body.data, { type: 'markdown', content: '## First week\n\n- [x] Get a laptop\n\n[Day one](<Onboarding/Day one.md>)\n' });
  t.is((await cat('nt/first/Handbook/Onboarding/Day one.md')).body.data.content, 'Coffee first.\n');
  const row = (await cat('nt/first/Tasks/Write docs.json')).body.data;
  t.is(row.type, 'json');
  t.deepEqual(row.content, { Name: 'Write docs', Points: 3, Stage: 'Todo' });
  t.is((await cat('nt/first/Private diary.md')).status, 404);
});

test.serial('incremental runs: only the edited page\'s blocks and the rows edited since the cursor; a rename is a move of the same nodes, an archived page goes to the trash', async (t) => {
  const w = workspace();
  const sync = await newSync(configFor('/nt/incr'));
  const first = await runOf(sync.id);
  t.like(first, { status: 'succeeded', pulled: { created: 6 } });
  const since = JSON.parse(first.cursor_after).dbs[DB].since as string;

  // One page's text and one row edited in Notion.
  w.fake.setContent(w.dayOne, [w.fake.paragraph(w.dayOne, 'Tea first.')]);
  ((w.fake.pages.get(w.rows.ship)!.properties as Record<string, Record<string, unknown>>).Points)!.number = 8;
  w.fake.touch(w.rows.ship);
  w.fake.seen.length = 0;
  const second = await runOf(sync.id);
  t.like(second, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 0 }, pushed: 0, conflicts: [], cursor_before: first.cursor_after });
  // The database's schema, the search down to the cursor, the edited page's blocks only, the rows edited since.
  t.deepEqual(calls(w.fake), [`GET /v1/databases/${DB}`, 'POST /v1/search', `GET /v1/blocks/${w.dayOne}/children`, `POST /v1/databases/${DB}/query`]);
  t.is(second.http_calls, 4);
  const query = w.fake.seen.at(-1)!.body as { filter: { timestamp: string; last_edited_time: { on_or_after: string } } };
  t.is(query.filter.timestamp, 'last_edited_time');
  t.is(Date.parse(query.filter.last_edited_time.on_or_after), Date.parse(since) - 5 * 60_000, 'rows edited since the cursor, with Notion\'s overlap');
  t.is((await cat('nt/incr/Handbook/Onboarding/Day one.md')).body.data.content, 'Tea first.\n');
  t.deepEqual((await cat('nt/incr/Tasks/Ship.json')).body.data.content, { Name: 'Ship', Points: 8, Stage: 'Todo' });

  // A rename and an archived page.
  const onboardingNode = (await cat('nt/incr/Handbook/Onboarding.md')).body.data.id as string;
  const dayOneNode = (await cat('nt/incr/Handbook/Onboarding/Day one.md')).body.data.id as string;
  w.fake.rename(w.onboarding, 'Getting started');
  w.fake.archive(w.policies);
  const third = await runOf(sync.id);
  // The renamed page and its sub-page move; the root's links change; Policies goes.
  t.like(third, { status: 'succeeded', pulled: { created: 0, updated: 3, deleted: 1 }, conflicts: [] });
  const renamed = (await cat('nt/incr/Handbook/Getting started.md')).body.data;
  t.is(renamed.id, onboardingNode);
  t.is(renamed.content, '## First week\n\n- [x] Get a laptop\n\n[Day one](<Getting started/Day one.md>)\n');
  const child = (await cat('nt/incr/Handbook/Getting started/Day one.md')).body.data;
  t.is(child.id, dayOneNode);
  t.is(child.content, 'Tea first.\n');
  t.is((await cat('nt/incr/Handbook/Onboarding.md')).status, 404);
  // Its history is kept across the move.
  t.deepEqual((await versions('nt/incr/Handbook/Getting started.md')).map((v) => v.path).at(-1), 'nt/incr/Handbook/Onboarding.md');
  t.deepEqual((await versions('nt/incr/Handbook/Getting started/Day one.md')).map((v) => v.path).at(-1), 'nt/incr/Handbook/Onboarding/Day one.md');
  t.is((await cat('nt/incr/Handbook.md')).body.data.content, 'Welcome to the handbook.\n\n[Getting started](<Handbook/Getting started.md>)\n');

  t.is((await cat('nt/incr/Handbook/Policies.md')).status, 404);
  const trash = (await server.api('GET', `/content/${projectId}/trash`, { token })).body.data.items as { original_path: string }[];
  t.true(trash.some((i) => i.original_path === 'nt/incr/Handbook/Policies.md'), JSON.stringify(trash));
});

test.serial('push: a page edited here replaces its blocks in Notion, a row edited here patches the changed property; neither comes back', async (t) => {
  const w = workspace();
  const sync = await newSync(configFor('/nt/push'));
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 6 } });
  const oldBlocks = w.fake.children.get(w.policies)!.map((b) => String(b.id));

  await write('nt/push/Handbook/Policies.md', '# Policies\n\nBe kind, always.\n', 'markdown');
  await write('nt/push/Tasks/Write docs.json', { Name: 'Write docs', Points: 4, Stage: 'Todo' }, 'json');
  w.fake.seen.length = 0;

  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 2, conflicts: [], error: null, errors: [] });

  // The page: its blocks read, the new ones appended, the old ones deleted, the page read again.
  const page = w.fake.seen.filter((s) => s.path.includes(w.policies) || s.method === 'DELETE');
  t.deepEqual(page.map((s) => `${s.method} ${s.path}`), [
    `GET /v1/blocks/${w.policies}/children`,
    `PATCH /v1/blocks/${w.policies}/children`,
    ...oldBlocks.map((id) => `DELETE /v1/blocks/${id}`),
    `GET /v1/pages/${w.policies}`,
  ]);
  const appended = (page[1]!.body as { children: Record<string, unknown>[] }).children;
  t.deepEqual(appended.map((b) => [b.object, b.type]), [
    ['block', 'heading_1'],
    ['block', 'paragraph'],
  ]);
  t.deepEqual(appended.map((b) => ((b[String(b.type)] as { rich_text: { text: { content: string } }[] }).rich_text.map((r) => r.text.content).join(''))), ['Policies', 'Be kind, always.']);
  t.deepEqual(w.fake.children.get(w.policies)!.map((b) => [b.type, blockText(b)]), [
    ['heading_1', 'Policies'],
    ['paragraph', 'Be kind, always.'],
  ]);
  // The row: only the changed property, in Notion's typed form.
  const patch = w.fake.seen.find((s) => s.method === 'PATCH' && s.path === `/v1/pages/${w.rows.writeDocs}`);
  t.deepEqual(patch?.body, { properties: { Points: { number: 4 } } });
  t.is(((w.fake.pages.get(w.rows.writeDocs)!.properties as Record<string, { number?: number }>).Points)!.number, 4);
  for (const s of w.fake.seen) t.is(s.headers.authorization, `Bearer ${NOTION_TOKEN}`);

  // What was pushed is not pulled back as a change, nor pushed again.
  w.fake.seen.length = 0;
  const after = await runOf(sync.id);
  t.like(after, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0, conflicts: [] });
  t.deepEqual(w.fake.seen.filter((s) => s.method === 'PATCH' || s.method === 'DELETE'), []);
  t.is((await cat('nt/push/Handbook/Policies.md')).body.data.content, '# Policies\n\nBe kind, always.\n');
  t.deepEqual((await cat('nt/push/Tasks/Write docs.json')).body.data.content, { Name: 'Write docs', Points: 4, Stage: 'Todo' });
});

test.serial('conflict: a page changed here and in Notion: Notion wins in the node, ours is in its history, the run lists the path', async (t) => {
  const w = workspace();
  const sync = await newSync(configFor('/nt/conflict'));
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 6 } });

  const path = 'nt/conflict/Handbook/Onboarding/Day one.md';
  await write(path, 'Ours.\n', 'markdown');
  w.fake.setContent(w.dayOne, [w.fake.paragraph(w.dayOne, 'Theirs.')]);
  w.fake.seen.length = 0;

  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 0, conflicts: [path] });
  t.is((await cat(path)).body.data.content, 'Theirs.\n');
  // Newest first: Notion's version by the sync, ours by the user before it, the first pull's.
  const history = await versions(path);
  t.deepEqual(history.map((v) => v.actor_type), ['sync', 'user', 'sync']);
  const ours = await server.api('GET', `/content/${projectId}/version-content?path=${encodeURIComponent(path)}&version=${history[1]!.version}`, { token });
  t.is(ours.body.data.content, 'Ours.\n');
  // The source won: nothing was written to Notion.
  t.deepEqual(w.fake.seen.filter((s) => s.method === 'PATCH' || s.method === 'DELETE'), []);
  t.deepEqual(w.fake.children.get(w.dayOne)!.map(blockText), ['Theirs.']);
});

test.serial('a 429 with Retry-After is waited out, and the run succeeds', async (t) => {
  const w = workspace();
  const sync = await newSync(configFor('/nt/limits'));
  w.fake.interrupts.push({
    path: /^\/v1\/search$/,
    status: 429,
    headers: { 'retry-after': '1' },
    body: { object: 'error', status: 429, code: 'rate_limited', message: 'You have been rate limited. Please try again in a few minutes.', request_id: 'req-429' },
  });
  const started = Date.now();
  const run = await runOf(sync.id);
  t.like(run, { status: 'succeeded', error: null, pulled: { created: 6 } });
  t.true(run.rate_limited_ms >= 1000, `rate_limited_ms ${run.rate_limited_ms}`);
  t.true(Date.now() - started >= 1000, 'the run really waited');
  // The refused search was asked again; every answer counts as a call.
  t.is(calls(w.fake).filter((c) => c === 'POST /v1/search').length, 2);
  t.is(run.http_calls, w.fake.seen.length);
  t.is((await cat('nt/limits/Handbook/Policies.md')).body.data.content, 'Be kind.\n');
});

// Last: it leaves the Notion connection needing reauthorization until it connects again.
test.serial('a 401 fails the run, pauses the sync with needs_reauth and marks the connection; connecting again resumes from the cursor', async (t) => {
  const w = workspace();
  const sync = await newSync(configFor('/nt/auth'));
  t.like(await runOf(sync.id), { status: 'succeeded', pulled: { created: 6 } });

  w.fake.setContent(w.policies, [w.fake.paragraph(w.policies, 'Be kind, edited.')]);
  w.fake.interrupts.push({
    path: /^\/v1\/databases\/[\w-]+$/,
    status: 401,
    headers: {},
    body: { object: 'error', status: 401, code: 'unauthorized', message: 'API token is invalid.', request_id: 'req-401' },
  });
  w.fake.seen.length = 0;
  const run = await runOf(sync.id);
  t.is(run.status, 'failed');
  t.regex(run.error, /Notion refused the stored token.*authorized again/);
  // An integration token cannot be refreshed: one request, no retry.
  t.deepEqual(calls(w.fake), [`GET /v1/databases/${DB}`]);
  t.is((await cat('nt/auth/Handbook/Policies.md')).body.data.content, 'Be kind.\n');
  const listed = (await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string }[];
  t.like(listed.find((s) => s.id === sync.id), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like((await server.api('GET', `/oauth/notion/status?project_id=${projectId}`, { token })).body.data, { connected: true, needs_reauth: true });
  t.is((await refresh(sync.id)).status, 409, 'a paused sync does not run');

  // The token connected again, the sync resumed: the run picks up from the stored cursor.
  nock.cleanAll();
  await connectNotion();
  w.fake.intercept();
  t.like((await server.api('GET', `/oauth/notion/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: false });
  t.is((await server.api('POST', `/sync/syncs/${sync.id}/resume`, { token })).status, 200);
  const again = await runOf(sync.id);
  t.like(again, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, cursor_before: run.cursor_after });
  t.is((await cat('nt/auth/Handbook/Policies.md')).body.data.content, 'Be kind, edited.\n');
});
