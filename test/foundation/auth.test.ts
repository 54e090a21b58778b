import test from 'ava';
import { ADMIN_EMAIL, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server.stop());

test('login returns tokens, their lifetime and the user', async (t) => {
  const res = await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: 'admin-password-1' } });
  t.is(res.status, 200);
  t.true(res.body.success);
  const d = res.body.data;
  t.is(d.token_type, 'bearer');
  t.is(d.expires_in, 3600);
  t.regex(d.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.regex(d.refresh_token, /^cnsr_/);
  t.is(d.user.email, ADMIN_EMAIL);
  t.false('password_hash' in d.user);
  const me = await server.api('GET', '/auth/me', { token: d.access_token });
  t.is(me.status, 200);
  t.is(me.body.data.user.email, ADMIN_EMAIL);
});

test('a wrong password or unknown email is 401 with the same message', async (t) => {
  const wrong = await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: 'nope-nope' } });
  const unknown = await server.api('POST', '/auth/login', { body: { email: 'ghost@example.com', password: 'nope-nope' } });
  t.is(wrong.status, 401);
  t.is(unknown.status, 401);
  t.is(wrong.body.error.code, 'UNAUTHORIZED');
  t.is(wrong.body.message, unknown.body.message);
});

test('refresh rotates the token and the old one stops working', async (t) => {
  const { refresh } = await server.login();
  const first = await server.api('POST', '/auth/refresh', { body: { refresh_token: refresh } });
  t.is(first.status, 200);
  t.not(first.body.data.refresh_token, refresh);
  const me = await server.api('GET', '/auth/me', { token: first.body.data.access_token });
  t.is(me.status, 200);
  const again = await server.api('POST', '/auth/refresh', { body: { refresh_token: first.body.data.refresh_token } });
  t.is(again.status, 200);
});

test('reusing a rotated refresh token revokes the whole family', async (t) => {
  const { refresh } = await server.login();
  const rotated = await server.api('POST', '/auth/refresh', { body: { refresh_token: refresh } });
  t.is(rotated.status, 200);
  const successor = rotated.body.data.refresh_token;
  const reuse = await server.api('POST', '/auth/refresh', { body: { refresh_token: refresh } });
  t.is(reuse.status, 401);
  t.is(reuse.body.error.details.reason, 'reused');
  const afterTheft = await server.api('POST', '/auth/refresh', { body: { refresh_token: successor } });
  t.is(afterTheft.status, 401, 'the legitimate successor is revoked too');
});

test('refresh tokens are stored only as hashes', async (t) => {
  const { refresh } = await server.login();
  const rows = await server.services.metadata.db.selectFrom('refresh_tokens').selectAll().execute();
  t.true(rows.length > 0);
  for (const row of rows) for (const value of Object.values(row)) t.not(value, refresh);
});

test('logout revokes the refresh token', async (t) => {
  const { refresh } = await server.login();
  const out = await server.api('POST', '/auth/logout', { body: { refresh_token: refresh } });
  t.is(out.status, 200);
  const res = await server.api('POST', '/auth/refresh', { body: { refresh_token: refresh } });
  t.is(res.status, 401);
});

test('sign-up is closed by default', async (t) => {
  const res = await server.api('POST', '/auth/signup', { body: { email: 'new@example.com', password: 'long-enough-1' } });
  t.is(res.status, 403);
  t.is(res.body.error.code, 'FORBIDDEN');
  t.is(await server.services.users.findByEmail('new@example.com'), undefined);
});

test('sign-up works when opened, and refuses a taken email with 409', async (t) => {
  const open = await startTestServer({ signupOpen: true });
  t.teardown(() => open.stop());
  const res = await open.api('POST', '/auth/signup', { body: { email: 'new@example.com', password: 'long-enough-1' } });
  t.is(res.status, 201);
  t.truthy(res.body.data.access_token);
  const dup = await open.api('POST', '/auth/signup', { body: { email: 'NEW@example.com', password: 'long-enough-1' } });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'CONFLICT');
  const short = await open.api('POST', '/auth/signup', { body: { email: 'x@example.com', password: 'short' } });
  t.is(short.status, 422);
  t.is(short.body.error.details[0].field, 'password');
});

test('a tampered or foreign token is 401', async (t) => {
  const { token } = await server.login();
  const [h, p, sig] = token.split('.');
  const tampered = `${h}.${p}.${sig!.slice(0, -2)}xx`;
  for (const bad of [tampered, 'not-a-token', 'cns_nonexistentkey']) {
    const res = await server.api('GET', '/auth/me', { token: bad });
    t.is(res.status, 401, bad);
    t.is(res.body.error.code, 'UNAUTHORIZED');
  }
  const basic = await server.api('GET', '/auth/me', { headers: { authorization: 'Basic abc' } });
  t.is(basic.status, 401);
});

test('GET /auth/config names the realtime address and a public anonymous key', async (t) => {
  const res = await server.api('GET', '/auth/config');
  t.is(res.status, 200);
  t.is(res.body.data.realtime_url, `${server.services.settings.baseUrl}/api/v1/events`);
  t.regex(res.body.data.anon_key, /^cns_anon_/);
});

test('the anon_key does exactly what it is for: identifies this server on the realtime feed, never grants access', async (t) => {
  const anonKey: string = (await server.api('GET', '/auth/config')).body.data.anon_key;
  const { token } = await server.login();
  const init = await server.api('POST', '/auth/initialize', { token });
  const projectId: string = init.body.data.project.id;
  const events = (query: string, headers: Record<string, string>) =>
    fetch(`${server.url}/api/v1/events?project_id=${projectId}${query}`, { headers }).then(async (res) => {
      const body = res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : null;
      if (!body) await res.body?.cancel();
      return { status: res.status, body: body as { error: { code: string }; message: string } | null };
    });
  // Alone, as a bearer credential: refused, saying why.
  const alone = await server.api('GET', '/auth/me', { token: anonKey });
  t.is(alone.status, 401);
  t.regex(alone.body.message, /anonymous key .* grants no access/);
  t.is((await events('', { authorization: `Bearer ${anonKey}` })).status, 401);
  // With a credential: the right key (header or query) is accepted, another deployment's is refused.
  t.is((await events('', { authorization: `Bearer ${token}`, apikey: anonKey })).status, 200);
  t.is((await events(`&apikey=${anonKey}`, { authorization: `Bearer ${token}` })).status, 200);
  const foreign = await events('', { authorization: `Bearer ${token}`, apikey: 'cns_anon_someotherdeployment00' });
  t.is(foreign.status, 401);
  t.regex(foreign.body!.message, /not the anon_key of this server/);
});
