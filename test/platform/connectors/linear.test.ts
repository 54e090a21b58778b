import test from 'ava';
import nock from 'nock';
import { readFileSync } from 'node:fs';
import { linearConnector } from '../../../src/platform/connectors/linear.ts';
import { descriptionVersion, issueJson } from '../../../src/platform/connectors/linear/issueItems.ts';
import type { LinearIssue } from '../../../src/platform/connectors/linear/queries.ts';
import type { ConnectorContext, KnownItem, LocalChange, PullPage, SourceChange, SourceItem, SourceResponse } from '../../../src/platform/runtime/connector.ts';
import { NeedsReauth, type CredentialSource, type SourceCredential } from '../../../src/platform/runtime/credentials.ts';
import { createSourceHttp, ProviderError } from '../../../src/platform/runtime/sourceHttp.ts';
import { convert } from '../../../src/ingest/converters/index.ts';

const API = 'https://api.linear.app';
const fixture = <T = any>(name: string): T => JSON.parse(readFileSync(new URL(`./fixtures/linear/${name}`, import.meta.url), 'utf8')) as T;
const page1 = fixture('issues-page-1.json');
const page2 = fixture('issues-page-2.json');
const incremental = fixture('issues-incremental.json');
const [issue1, issue2] = page1.data.issues.nodes as LinearIssue[];
const [issue3] = page2.data.issues.nodes as LinearIssue[];

const OAUTH: SourceCredential = { kind: 'oauth', accessToken: 'lin_oat_0123456789', scopes: ['read', 'write'], account: 'Ada Lovelace' };
const PERSONAL_KEY: SourceCredential = { kind: 'token', accessToken: 'lin_api_abcdefghij', scopes: [], account: null };

interface Seen {
  auth: string | null;
  operation: string;
  variables: Record<string, any>;
}

/** Linear's endpoint answering the scripted replies in order; records what each request sent. */
function linearApi(replies: [number, unknown, Record<string, string>?][]): Seen[] {
  const seen: Seen[] = [];
  nock(API)
    .post('/graphql')
    .times(replies.length)
    .reply(async (req) => {
      const body = (await req.json()) as { query: string; variables: Record<string, unknown> };
      seen.push({ auth: req.headers.get('authorization'), operation: /^(?:query|mutation) (\w+)/.exec(body.query)?.[1] ?? '?', variables: body.variables });
      const [status, answer, headers] = replies[seen.length - 1]!;
      return [status, answer as nock.Body, { 'content-type': 'application/json; charset=utf-8', ...headers }];
    });
  return seen;
}

function knownOf(items: KnownItem[]): ConnectorContext['known'] {
  const map = new Map(items.map((i) => [i.sourceId, i]));
  return { get: (id) => map.get(id), all: () => map.values(), get size() { return map.size; } };
}

/** What a sync holds after pulling `issues`: both items of each. */
function knownIssues(issues: LinearIssue[]): KnownItem[] {
  return issues.flatMap((i) => [
    { sourceId: i.id, path: `issues/${i.identifier}.json`, sourceVersion: i.updatedAt, meta: { teamId: i.team?.id ?? null } },
    { sourceId: `${i.id}:description`, path: `issues/${i.identifier}.md`, sourceVersion: descriptionVersion(i.description), meta: { teamId: i.team?.id ?? null } },
  ]);
}

function harness(o: { config?: Record<string, unknown>; known?: KnownItem[]; credential?: SourceCredential; now?: number } = {}) {
  const counters = { httpCalls: 0, rateLimitedMs: 0 };
  const sleeps: number[] = [];
  const signal = new AbortController().signal;
  const credential = o.credential ?? OAUTH;
  const credentials: CredentialSource = {
    get: async () => credential,
    afterUnauthorized: async (_project, provider) => {
      throw new NeedsReauth(provider);
    },
  };
  const http = createSourceHttp({
    connector: linearConnector,
    credentials,
    projectId: 'prj_test',
    apiBase: API,
    allowPrivate: false,
    signal,
    counters,
    now: o.now === undefined ? undefined : () => o.now!,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const ctx: ConnectorContext = {
    syncId: 'syn_test',
    projectId: 'prj_test',
    config: o.config ?? { path: 'linear', team_key: 'ENG' },
    known: knownOf(o.known ?? []),
    http,
    apiBase: API,
    runMessage: 'sync linear: test run',
    convert,
    signal,
  };
  return { ctx, counters, sleeps };
}

async function pullAll(ctx: ConnectorContext, cursor: string | null): Promise<PullPage[]> {
  const pages: PullPage[] = [];
  for await (const p of linearConnector.pull(ctx, cursor)) pages.push(p);
  return pages;
}

const upserts = (changes: SourceChange[]): SourceItem[] => changes.flatMap((c) => (c.kind === 'upsert' ? [c.item] : []));
const deletes = (changes: SourceChange[]): string[] => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : []));

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

test.serial('a first pull lists the team\'s issues 100 at a time, the OAuth token sent as Bearer', async (t) => {
  const seen = linearApi([
    [200, page1, { 'x-ratelimit-requests-remaining': '4998', 'x-ratelimit-requests-reset': '1715000000000' }],
    [200, page2],
  ]);
  const { ctx, counters } = harness();
  const pages = await pullAll(ctx, null);

  t.deepEqual(seen, [
    { auth: 'Bearer lin_oat_0123456789', operation: 'CnsIssues', variables: { filter: { team: { key: { eq: 'ENG' } } }, first: 100, after: null, includeArchived: false } },
    {
      auth: 'Bearer lin_oat_0123456789',
      operation: 'CnsIssues',
      variables: { filter: { team: { key: { eq: 'ENG' } } }, first: 100, after: page1.data.issues.pageInfo.endCursor, includeArchived: false },
    },
  ]);
  t.is(counters.httpCalls, 2);
  // The cursor moves only once the listing is complete: to the newest updatedAt seen.
  t.deepEqual(
    pages.map((p) => p.cursor),
    [null, '2024-05-03T12:30:00.000Z'],
  );
  const items = upserts(pages.flatMap((p) => p.changes));
  t.deepEqual(
    items.map((i) => [i.sourceId, i.path, i.type]),
    [
      [issue1.id, 'issues/ENG-1.json', 'json'],
      [`${issue1.id}:description`, 'issues/ENG-1.md', 'markdown'],
      [issue2.id, 'issues/ENG-2.json', 'json'],
      [`${issue2.id}:description`, 'issues/ENG-2.md', 'markdown'],
      [issue3.id, 'issues/ENG-3.json', 'json'],
      [`${issue3.id}:description`, 'issues/ENG-3.md', 'markdown'],
    ],
  );
  t.deepEqual(items[0]!.content, {
    id: issue1.id,
    identifier: 'ENG-1',
    title: 'Crash on start',
    state: { name: 'Todo', type: 'unstarted' },
    assignee: { id: '5b2a7e01-user-ada', name: 'Ada Lovelace', email: 'ada@example.com' },
    priority: 2,
    labels: [{ id: '0a7f3b2c-label-bug', name: 'Bug' }],
    project: { id: '7d3e5f60-project-launch', name: 'Launch' },
    cycle: { id: '2e8d4c1b-cycle-4', number: 4, name: null },
    team: { id: '8a6b1c2d-team-eng', key: 'ENG' },
    estimate: 3,
    dueDate: '2024-06-01',
    createdAt: '2024-04-01T10:00:00.000Z',
    updatedAt: '2024-05-02T09:00:00.000Z',
    url: 'https://linear.app/acme/issue/ENG-1/crash-on-start',
  });
  t.is(items[0]!.sourceVersion, '2024-05-02T09:00:00.000Z');
  t.is(items[1]!.content, issue1.description);
  t.is(items[1]!.sourceVersion, descriptionVersion(issue1.description));
  // No description: an empty Markdown node, no assignee: null.
  t.is(items[3]!.content, '');
  t.is((items[2]!.content as { assignee: unknown }).assignee, null);
  t.deepEqual(deletes(pages.flatMap((p) => p.changes)), []);
});

test.serial('a personal API key goes bare in Authorization; team_id and project_id narrow the filter', async (t) => {
  const seen = linearApi([[200, page2]]);
  const { ctx } = harness({ credential: PERSONAL_KEY, config: { path: 'linear', team_id: '8a6b1c2d-team-eng', project_id: '7d3e5f60-project-launch' } });
  await pullAll(ctx, null);
  t.is(seen[0]!.auth, 'lin_api_abcdefghij');
  t.deepEqual(seen[0]!.variables.filter, { team: { id: { eq: '8a6b1c2d-team-eng' } }, project: { id: { eq: '7d3e5f60-project-launch' } } });
});

test.serial('an incremental pull asks only for issues updated since the cursor: archived and trashed ones leave, moved ones keep their id', async (t) => {
  const cursor = '2024-05-03T12:30:00.000Z';
  const moved = { id: '9f1c2e4a-0000-4000-8000-000000000005', identifier: 'ENG-5', updatedAt: '2024-05-01T00:00:00.000Z', description: null, team: { id: 'x', key: 'ENG' } };
  const seen = linearApi([[200, incremental], [200, fixture('out-of-scope-ids.json')]]);
  const config = { path: 'linear', project_id: '7d3e5f60-project-launch' };
  const { ctx, counters } = harness({ config, known: knownIssues([issue1, issue2, issue3, moved as LinearIssue]) });
  const pages = await pullAll(ctx, cursor);

  t.deepEqual(seen.map((s) => [s.operation, s.variables]), [
    ['CnsIssues', { filter: { project: { id: { eq: '7d3e5f60-project-launch' } }, updatedAt: { gt: cursor } }, first: 100, after: null, includeArchived: true }],
    // Issues held here that now belong elsewhere: ids only.
    ['CnsIssueIds', { filter: { or: [{ project: { null: true } }, { project: { id: { neq: '7d3e5f60-project-launch' } } }], updatedAt: { gt: cursor } }, first: 250, after: null }],
  ]);
  t.is(counters.httpCalls, 2);
  t.is(pages.length, 1);
  t.is(pages[0]!.cursor, '2024-05-11T07:45:00.000Z');
  const changes = pages[0]!.changes;
  t.deepEqual(
    upserts(changes).map((i) => [i.sourceId, i.path]),
    [
      [issue1.id, 'issues/ENG-1.json'],
      [`${issue1.id}:description`, 'issues/ENG-1.md'],
      // Moved to another team: a new identifier, the same source id (the runtime makes it a move).
      [issue3.id, 'issues/OPS-7.json'],
      [`${issue3.id}:description`, 'issues/OPS-7.md'],
    ],
  );
  t.is((upserts(changes)[0]!.content as { title: string }).title, 'Crash on start (fixed title)');
  t.deepEqual(deletes(changes), [
    issue2.id,
    `${issue2.id}:description`, // archived
    '9f1c2e4a-0000-4000-8000-000000000004',
    '9f1c2e4a-0000-4000-8000-000000000004:description', // trashed
    moved.id,
    `${moved.id}:description`, // out of scope; the unknown id of that answer is ignored
  ]);
});

test.serial('a full pull removes what the sync holds and Linear no longer lists', async (t) => {
  linearApi([[200, page2]]);
  const gone = { id: 'dead0000-0000-4000-8000-000000000009', identifier: 'ENG-9', updatedAt: '2024-01-01T00:00:00.000Z', description: 'x', team: null };
  const { ctx } = harness({ known: knownIssues([issue3, gone as LinearIssue]) });
  const pages = await pullAll(ctx, null);
  t.deepEqual(deletes(pages[0]!.changes), [gone.id, `${gone.id}:description`]);
});

test.serial('Linear\'s rate limit (400 RATELIMITED) is waited out until X-RateLimit-Requests-Reset', async (t) => {
  const now = 1_715_000_000_000;
  const seen = linearApi([
    [400, fixture('error-ratelimited.json'), { 'x-ratelimit-requests-limit': '5000', 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(now + 1_500) }],
    [200, page2],
  ]);
  const { ctx, counters, sleeps } = harness({ now });
  const pages = await pullAll(ctx, null);
  t.is(seen.length, 2);
  t.deepEqual(sleeps, [1_500]);
  t.is(counters.rateLimitedMs, 1_500);
  t.is(upserts(pages[0]!.changes).length, 2);
});

test('the rate-limit wait follows the exhausted budget (complexity), else Retry-After', (t) => {
  const now = 1_000_000;
  const res = (status: number, body: unknown, headers: Record<string, string>): SourceResponse => ({
    status,
    headers,
    body: Buffer.from(JSON.stringify(body)),
    json: <T>() => body as T,
    text: () => JSON.stringify(body),
  });
  const limited = fixture('error-ratelimited.json');
  const delay = linearConnector.rateLimitDelay!;
  t.is(
    delay(res(400, limited, { 'x-ratelimit-requests-remaining': '12', 'x-ratelimit-requests-reset': String(now + 1_000), 'x-ratelimit-complexity-remaining': '0', 'x-ratelimit-complexity-reset': String(now + 9_000) }), now),
    9_000,
  );
  t.is(delay(res(429, {}, { 'retry-after': '7' }), now), 7_000);
  t.is(delay(res(400, fixture('error-input.json'), {}), now), null);
  t.is(delay(res(500, limited, {}), now), null);
});

test.serial('a GraphQL error in a 200 answer fails the pull with Linear\'s words', async (t) => {
  linearApi([[200, fixture('error-input.json')]]);
  const { ctx } = harness();
  const err = await t.throwsAsync(pullAll(ctx, null), { instanceOf: ProviderError });
  t.is(err.message, 'linear answered 200: Could not find referenced Team.');
});

test.serial('an authentication error in a GraphQL answer means reconnecting Linear', async (t) => {
  linearApi([[200, fixture('error-authentication.json')]]);
  const { ctx } = harness();
  const err = await t.throwsAsync(pullAll(ctx, null), { instanceOf: NeedsReauth });
  t.regex(err.message, /You need to authenticate/);
  // The hook the runtime can use to treat such an answer as a 401 (refresh, then needs_reauth).
  const answer = (status: number, body: unknown): SourceResponse => ({ status, headers: {}, body: Buffer.from(JSON.stringify(body)), json: <T>() => body as T, text: () => '' });
  t.true(linearConnector.isUnauthorized!(answer(400, fixture('error-authentication.json'))));
  t.false(linearConnector.isUnauthorized!(answer(400, fixture('error-ratelimited.json'))));
});

function update(issue: LinearIssue, content: unknown, previous: unknown = issueJson(issue)): LocalChange {
  return {
    kind: 'update',
    sourceId: issue.id,
    known: { sourceId: issue.id, path: `issues/${issue.identifier}.json`, sourceVersion: issue.updatedAt, meta: { teamId: issue.team!.id } },
    path: `issues/${issue.identifier}.json`,
    type: 'json',
    content,
    previous,
  };
}

test.serial('push: title and state (by name) go back in one issueUpdate; other fields, creates and deletes are refused', async (t) => {
  const seen = linearApi([[200, fixture('team-states.json')], [200, fixture('issue-update.json')]]);
  const { ctx } = harness();
  const before = issueJson(issue1);
  const changes: LocalChange[] = [
    update(issue1, { ...before, title: 'Crash on launch', state: { name: 'in progress', type: 'unstarted' } }),
    update(issue2, { ...issueJson(issue2), priority: 1, labels: [{ id: 'lbl-x', name: 'Feature' }] }),
    { kind: 'create', path: 'issues/NEW.json', type: 'json', content: { title: 'new' } },
    { kind: 'delete', sourceId: issue3.id, known: knownIssues([issue3])[0]! },
  ];
  const outcomes = await linearConnector.push!(ctx, changes);

  t.deepEqual(seen.map((s) => [s.operation, s.variables]), [
    ['CnsTeamStates', { id: '8a6b1c2d-team-eng' }],
    ['CnsIssueUpdate', { id: issue1.id, input: { title: 'Crash on launch', stateId: '4c1e0d7a-state-progress' } }],
  ]);
  t.deepEqual(outcomes[0], {
    ok: true,
    sourceId: issue1.id,
    sourceVersion: '2024-05-12T10:00:00.000Z',
    path: 'issues/ENG-1.json',
    meta: { teamId: '8a6b1c2d-team-eng', identifier: 'ENG-1' },
  });
  t.deepEqual(outcomes[1], {
    ok: false,
    message:
      'Linear takes back the title, the state (by name), the assignee (by id or email) and the description (the .md node); not priority, labels. Undo those edits or make them in Linear.',
  });
  t.false(outcomes[2]!.ok);
  t.regex((outcomes[2] as { message: string }).message, /not created from here/);
  t.regex((outcomes[3] as { message: string }).message, /not deleted from here/);
});

test.serial('push: an assignee by email is looked up; the description goes back from the Markdown node', async (t) => {
  const updated = fixture('issue-update.json');
  const seen = linearApi([[200, fixture('user-by-email.json')], [200, updated], [200, updated]]);
  const { ctx } = harness({ credential: PERSONAL_KEY });
  const before = issueJson(issue1);
  const description: LocalChange = {
    kind: 'update',
    sourceId: `${issue1.id}:description`,
    known: knownIssues([issue1])[1]!,
    path: 'issues/ENG-1.md',
    type: 'markdown',
    content: 'Rewritten **here**.\n',
    previous: issue1.description,
  };
  const outcomes = await linearConnector.push!(ctx, [
    update(issue1, { ...before, assignee: { id: before.assignee && (before.assignee as { id: string }).id, name: 'Grace', email: 'grace@example.com' } }),
    description,
  ]);
  t.deepEqual(seen.map((s) => [s.auth, s.operation, s.variables]), [
    ['lin_api_abcdefghij', 'CnsUserByEmail', { email: 'grace@example.com' }],
    ['lin_api_abcdefghij', 'CnsIssueUpdate', { id: issue1.id, input: { assigneeId: '5b2a7e01-user-grace' } }],
    ['lin_api_abcdefghij', 'CnsIssueUpdate', { id: issue1.id, input: { description: 'Rewritten **here**.\n' } }],
  ]);
  t.true(outcomes[0]!.ok);
  t.deepEqual(outcomes[1], { ok: true, sourceId: `${issue1.id}:description`, sourceVersion: descriptionVersion(updated.data.issueUpdate.issue.description), path: 'issues/ENG-1.md' });
});

test.serial('push: an unknown state name is refused, naming the team\'s states', async (t) => {
  linearApi([[200, fixture('team-states.json')]]);
  const { ctx } = harness();
  const [outcome] = await linearConnector.push!(ctx, [update(issue1, { ...issueJson(issue1), state: { name: 'Shipped' } })]);
  t.deepEqual(outcome, { ok: false, message: 'the team has no workflow state "Shipped" (it has: Backlog, Todo, In Progress, Done)' });
});

test('config: a team (by id or key) or a project is required; comments are refused', (t) => {
  const v = linearConnector.validateConfig!;
  t.notThrows(() => v({ path: 'l', team_key: 'ENG' }));
  t.notThrows(() => v({ path: 'l', project_id: 'p1' }));
  t.throws(() => v({ path: 'l' }), { message: /team_id or team_key/ });
  t.throws(() => v({ path: 'l', team_id: 't', team_key: 'ENG' }), { message: /not both/ });
  t.throws(() => v({ path: 'l', team_key: 'ENG', include_comments: true }), { message: /comments are not synced/ });
  t.is(linearConnector.authHeaders(OAUTH).authorization, 'Bearer lin_oat_0123456789');
  t.is(linearConnector.authHeaders(PERSONAL_KEY).authorization, 'lin_api_abcdefghij');
});
