import test from 'ava';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { TEST_ENGINE } from '../helpers/testEngine.ts';

let server: TestServer;
let token: string;
test.before(async () => {
  server = await startTestServer({ bodyLimitBytes: 64 * 1024 });
  token = (await server.login()).token;
});
test.after.always(() => server.stop());

test('GET /healthz answers without credentials with the version and the database state', async (t) => {
  const res = await server.api('GET', '/healthz');
  t.is(res.status, 200);
  t.deepEqual(res.body.data, { status: 'ok', version: '0.1.0', database: true, metadata_engine: TEST_ENGINE, node: null });
});

test('every response carries an X-Request-Id, and a sane incoming one is echoed', async (t) => {
  const fresh = await server.api('GET', '/healthz');
  t.regex(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const echoed = await server.api('GET', '/auth/me', { token, headers: { 'x-request-id': 'trace-123' } });
  t.is(echoed.headers.get('x-request-id'), 'trace-123');
  const hostile = await server.api('GET', '/healthz', { headers: { 'x-request-id': 'a b\tc' } });
  t.not(hostile.headers.get('x-request-id'), 'a b\tc');
});

test('unknown routes are 404 in the envelope', async (t) => {
  const res = await server.api('GET', '/no/such/route', { token });
  t.is(res.status, 404);
  t.deepEqual(Object.keys(res.body).sort(), ['code', 'data', 'error', 'message', 'success']);
  t.false(res.body.success);
  t.is(res.body.data, null);
  t.is(res.body.error.code, 'NOT_FOUND');
  t.is(res.body.code, 'NOT_FOUND', 'clients that read `code` see the error code');
});

test('a success carries code 0, which clients written for the spec read as success', async (t) => {
  const res = await server.api('GET', '/auth/me', { token });
  t.is(res.status, 200);
  t.is(res.body.code, 0);
  t.true(res.body.success);
});

test('a missing credential is 401 in the envelope', async (t) => {
  const res = await server.api('GET', '/auth/me');
  t.is(res.status, 401);
  t.is(res.body.error.code, 'UNAUTHORIZED');
  t.is(typeof res.body.message, 'string');
});

test('malformed JSON is 422, not 500', async (t) => {
  const res = await server.api('POST', '/auth/login', { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
  t.is(res.status, 422);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
});

test('a JSON scalar where an object is expected is 422', async (t) => {
  const res = await server.api('POST', '/auth/login', { raw: '"hello"', headers: { 'content-type': 'application/json' } });
  t.is(res.status, 422);
});

test('wrong types and missing fields are 422 with a detail for each field', async (t) => {
  const res = await server.api('POST', '/auth/login', { body: { email: 42 } });
  t.is(res.status, 422);
  const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
  t.deepEqual(fields, ['email', 'password']);
});

test('a body over the configured limit is 413 and changes nothing', async (t) => {
  const users = await server.services.users.count();
  const huge = JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(128 * 1024) });
  const res = await server.api('POST', '/auth/login', { raw: huge, headers: { 'content-type': 'application/json' } });
  t.is(res.status, 413);
  t.is(res.body.error.code, 'PAYLOAD_TOO_LARGE');
  t.is(await server.services.users.count(), users);
});

test('errors never include stack traces', async (t) => {
  const res = await server.api('POST', '/auth/login', { raw: '{', headers: { 'content-type': 'application/json' } });
  t.false(JSON.stringify(res.body).includes('    at '));
});

test('requests over the rate limit are 429 with Retry-After', async (t) => {
  const limited = await startTestServer({ rateLimitMax: 3, rateLimitWindowMs: 60_000 });
  t.teardown(() => limited.stop());
  const { token: tk } = await limited.login();
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 5; i++) {
    last = await limited.api('GET', '/auth/me', { token: tk });
    statuses.push(last.status);
  }
  t.deepEqual(statuses, [200, 200, 200, 429, 429]);
  t.is(last!.body.error.code, 'RATE_LIMITED');
  t.true(Number(last!.headers.get('retry-after')) >= 1);
});

test('login attempts have their own tighter limit', async (t) => {
  const limited = await startTestServer({ loginRateLimitMax: 2, loginRateLimitWindowMs: 60_000 });
  t.teardown(() => limited.stop());
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await limited.api('POST', '/auth/login', { body: { email: 'admin@example.com', password: 'wrong-password' } });
    statuses.push(res.status);
  }
  t.deepEqual(statuses, [401, 401, 429]);
});

test('login attempts are also capped per address whatever the email, so unknown emails cannot buy scrypt work', async (t) => {
  const limited = await startTestServer({ loginRateLimitMax: 100, loginAddressRateLimitMax: 3, loginRateLimitWindowMs: 60_000 });
  t.teardown(() => limited.stop());
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await limited.api('POST', '/auth/login', { body: { email: `nobody-${i}@example.com`, password: 'wrong-password' } });
    statuses.push(res.status);
  }
  t.deepEqual(statuses, [401, 401, 401, 429, 429]);
  const { loadSettings } = await import('../../src/config/settings.ts');
  t.is(loadSettings({ CNS_LOGIN_RATE_LIMIT_MAX: '10' }).loginAddressRateLimitMax, 30, 'defaults to three times the per-email cap');
  t.is(loadSettings({ CNS_LOGIN_ADDRESS_RATE_LIMIT_MAX: '7' }).loginAddressRateLimitMax, 7);
});
