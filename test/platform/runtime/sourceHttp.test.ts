import test from 'ava';
import nock from 'nock';
import type { PlatformConnector } from '../../../src/platform/runtime/connector.ts';
import { NeedsReauth, type CredentialSource, type SourceCredential } from '../../../src/platform/runtime/credentials.ts';
import { providerMessage } from '../../../src/platform/runtime/providerError.ts';
import { createSourceHttp, ProviderError, retryAfterMs } from '../../../src/platform/runtime/sourceHttp.ts';

const API = 'https://api.fake.example';

const connector: PlatformConnector = {
  spec: {
    provider: 'fake',
    display_name: 'Fake',
    description: 'test',
    auth: { type: 'oauth', description: 'test' },
    sync_modes: ['manual'],
    default_sync_mode: 'manual',
    directions: ['pull'],
    config_fields: [],
  },
  authHeaders: (c) => ({ authorization: `Bearer ${c.accessToken}`, 'fake-version': '2024' }),
  // GitHub's style: 403 with no remaining calls, reset at a given second.
  rateLimitDelay: (res, now) => (res.status === 403 && res.headers['x-ratelimit-remaining'] === '0' ? Number(res.headers['x-ratelimit-reset']) * 1000 - now : null),
  async *pull() {},
};

function credentialSource(tokens: string[]): CredentialSource & { refreshes: string[]; marked: number } {
  const cred = (t: string): SourceCredential => ({ kind: 'oauth', accessToken: t, scopes: [], account: null });
  let i = 0;
  return {
    refreshes: [],
    marked: 0,
    async get() {
      return cred(tokens[i]!);
    },
    async afterUnauthorized(_p, provider, rejected) {
      this.refreshes.push(rejected.accessToken);
      if (i + 1 >= tokens.length) throw new NeedsReauth(provider);
      return cred(tokens[++i]!);
    },
    markNeedsReauth() {
      this.marked++;
    },
  };
}

function setup(o: { tokens?: string[]; signal?: AbortSignal; now?: () => number } = {}) {
  const counters = { httpCalls: 0, rateLimitedMs: 0 };
  const sleeps: number[] = [];
  const credentials = credentialSource(o.tokens ?? ['tok-1', 'tok-2']);
  const http = createSourceHttp({
    connector,
    credentials,
    projectId: 'prj_1',
    apiBase: `${API}/v1/`,
    allowPrivate: false,
    signal: o.signal ?? new AbortController().signal,
    counters,
    now: o.now,
    sleep: async (ms, signal) => {
      signal.throwIfAborted();
      sleeps.push(ms);
    },
  });
  return { http, counters, sleeps, credentials };
}

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

test.serial('sends the auth headers, query and JSON body; counts calls', async (t) => {
  const seen: Record<string, unknown>[] = [];
  nock(API)
    .get('/v1/items')
    .query({ since: '2024-01-01', limit: '50' })
    .reply((req) => {
      seen.push({ auth: req.headers.get('authorization'), version: req.headers.get('fake-version') });
      return [200, { items: [1, 2] }];
    })
    .post('/v1/items', { title: 'x' })
    .matchHeader('content-type', 'application/json')
    .reply(201, { id: 'i1' });
  const { http, counters } = setup();
  const res = await http.request({ url: '/items', query: { since: '2024-01-01', limit: 50, skip: undefined } });
  t.deepEqual(res.json(), { items: [1, 2] });
  t.deepEqual(seen, [{ auth: 'Bearer tok-1', version: '2024' }]);
  const created = await http.request({ method: 'POST', url: `${API}/v1/items`, json: { title: 'x' } });
  t.is(created.status, 201);
  t.is(counters.httpCalls, 2);
  t.true(nock.isDone());
});

test.serial('429 with Retry-After in seconds or as a date is waited out and counted', async (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  nock(API)
    .get('/v1/a')
    .reply(429, { message: 'slow down' }, { 'retry-after': '2' })
    .get('/v1/a')
    .reply(429, {}, { 'retry-after': new Date(now + 3000).toUTCString() })
    .get('/v1/a')
    .reply(200, { ok: true });
  const { http, counters, sleeps } = setup({ now: () => now });
  const res = await http.request({ url: '/a' });
  t.is(res.status, 200);
  t.deepEqual(sleeps, [2000, 3000]);
  t.is(counters.rateLimitedMs, 5000);
  t.is(counters.httpCalls, 3);
});

test.serial("the connector's own rate-limit signal is honored (403 with no remaining calls)", async (t) => {
  const now = 1_700_000_000_000;
  nock(API)
    .get('/v1/b')
    .reply(403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 4) })
    .get('/v1/b')
    .reply(200, {});
  const { http, counters, sleeps } = setup({ now: () => now });
  await http.request({ url: '/b' });
  t.deepEqual(sleeps, [4000]);
  t.is(counters.rateLimitedMs, 4000);
});

test.serial('a rate limit longer than the cap fails with the provider message', async (t) => {
  nock(API).get('/v1/c').reply(429, { error: { type: 'RATE_LIMIT', message: 'quota exhausted' } }, { 'retry-after': '3600' });
  const { http, sleeps } = setup();
  const err = await t.throwsAsync(http.request({ url: '/c' }), { instanceOf: ProviderError });
  t.is(err!.status, 429);
  t.regex(err!.message, /quota exhausted/);
  t.deepEqual(sleeps, []);
});

test.serial('5xx answers are retried with growing backoff, then fail with the provider message', async (t) => {
  nock(API).get('/v1/d').times(4).reply(503, { errors: [{ message: 'backend unavailable' }] });
  const { http, counters, sleeps } = setup();
  const err = await t.throwsAsync(http.request({ url: '/d' }), { instanceOf: ProviderError });
  t.is(err!.status, 503);
  t.is(err!.providerMessage, 'backend unavailable');
  t.is(counters.httpCalls, 4);
  t.is(sleeps.length, 3);
  t.true(sleeps[0]! >= 250 && sleeps[0]! <= 500 && sleeps[2]! >= 1000 && sleeps[2]! <= 2000, sleeps.join(','));
  t.is(counters.rateLimitedMs, 0, 'backoff is not rate limiting');
});

test.serial('a 5xx or a network failure followed by success succeeds', async (t) => {
  nock(API).get('/v1/e').reply(502, 'Bad gateway').get('/v1/e').replyWithError('socket hang up').get('/v1/e').reply(200, { n: 1 });
  const { http, counters } = setup();
  t.deepEqual((await http.request({ url: '/e' })).json(), { n: 1 });
  t.is(counters.httpCalls, 3);
});

test.serial('a network failure that lasts fails with its message', async (t) => {
  nock(API).get('/v1/f').times(4).replyWithError('connect ECONNREFUSED');
  const { http } = setup();
  const err = await t.throwsAsync(http.request({ url: '/f' }), { instanceOf: ProviderError });
  t.is(err!.status, null);
  t.regex(err!.message, /ECONNREFUSED/);
});

test.serial('a 401 refreshes the credential once and retries with the new one', async (t) => {
  const auths: string[] = [];
  nock(API)
    .get('/v1/g')
    .times(2)
    .reply((req) => {
      auths.push(String(req.headers.get('authorization')));
      return auths.length === 1 ? [401, { message: 'Bad credentials' }] : [200, {}];
    });
  const { http, credentials } = setup();
  await http.request({ url: '/g' });
  t.deepEqual(auths, ['Bearer tok-1', 'Bearer tok-2']);
  t.deepEqual(credentials.refreshes, ['tok-1']);
  t.is(credentials.marked, 0);
});

test.serial('a second 401 after the refresh is NeedsReauth and marks the connection', async (t) => {
  nock(API).get('/v1/h').times(2).reply(401, { message: 'Bad credentials' });
  const { http, credentials } = setup({ tokens: ['a', 'b', 'c'] });
  await t.throwsAsync(http.request({ url: '/h' }), { instanceOf: NeedsReauth });
  t.deepEqual(credentials.refreshes, ['a']);
  t.is(credentials.marked, 1);
});

test.serial('a 401 the credential source cannot refresh is NeedsReauth at once', async (t) => {
  nock(API).get('/v1/i').reply(401, {});
  const { http, counters } = setup({ tokens: ['only'] });
  const err = await t.throwsAsync(http.request({ url: '/i' }), { instanceOf: NeedsReauth });
  t.regex(err!.message, /fake connection needs to be authorized again/);
  t.is(counters.httpCalls, 1);
});

test.serial('other 4xx fail with the provider message unless accepted', async (t) => {
  nock(API)
    .get('/v1/j')
    .reply(404, { object: 'error', status: 404, code: 'object_not_found', message: 'Could not find page' })
    .get('/v1/j')
    .reply(404, { message: 'gone' });
  const { http, counters } = setup();
  const err = await t.throwsAsync(http.request({ url: '/j' }), { instanceOf: ProviderError });
  t.is(err!.message, 'fake answered 404: Could not find page');
  const accepted = await http.request({ url: '/j', accept: [404] });
  t.is(accepted.status, 404);
  t.is(counters.httpCalls, 2, 'no retries for a 4xx');
});

test.serial('redirects to another origin go without the credential', async (t) => {
  const seen: (string | null)[] = [];
  nock(API).get('/v1/file').reply(302, '', { location: 'https://cdn.fake.example/blob/1' });
  nock('https://cdn.fake.example')
    .get('/blob/1')
    .reply((req) => {
      seen.push(req.headers.get('authorization'), req.headers.get('fake-version'));
      return [200, 'bytes'];
    });
  const { http, counters } = setup();
  t.is((await http.request({ url: '/file' })).text(), 'bytes');
  t.deepEqual(seen, [null, null]);
  t.is(counters.httpCalls, 2);
});

test.serial('an aborted run stops waiting and does not retry', async (t) => {
  const ac = new AbortController();
  nock(API).get('/v1/k').reply(503, {});
  const { http, counters } = setup({ signal: ac.signal });
  const p = http.request({ url: '/k' });
  ac.abort();
  await t.throwsAsync(p, { any: true, name: 'AbortError' });
  t.true(counters.httpCalls <= 1);
});

test('the outbound guard still applies: private addresses are refused without a request', async (t) => {
  const { http, counters } = setup();
  await t.throwsAsync(http.request({ url: 'http://127.0.0.1:9/x' }), { message: /not a public address/ });
  t.is(counters.httpCalls, 1);
});

test('provider messages are read from the usual error bodies', (t) => {
  const m = (j: unknown, status = 400) => providerMessage(Buffer.from(typeof j === 'string' ? j : JSON.stringify(j)), status);
  t.is(m({ message: 'Not Found', documentation_url: 'https://docs' }), 'Not Found');
  t.is(m({ error: { type: 'INVALID', message: 'Field x unknown' } }), 'Field x unknown');
  t.is(m({ errors: [{ message: 'Entity not found', extensions: {} }] }), 'Entity not found');
  t.is(m({ error: 'invalid_grant', error_description: 'Token expired' }), 'Token expired');
  t.is(m({ error: 'NOT_FOUND' }), 'NOT_FOUND');
  t.is(m('plain words'), 'plain words');
  t.is(m('<html>oops</html>', 502), 'HTTP 502');
});

test('Retry-After is read in seconds and as an HTTP date', (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.is(retryAfterMs({ headers: { 'retry-after': '1' } }, now), 1000);
  t.is(retryAfterMs({ headers: { 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' } }, now), 10_000);
  t.is(retryAfterMs({ headers: {} }, now), null);
  t.is(retryAfterMs({ headers: { 'retry-after': 'soon' } }, now), null);
});
