import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * The dashboard's cookie session (POST /auth/login with session "cookie"): HttpOnly SameSite
 * cookies, a CSRF header on every write, refresh and logout through the cookies, and Bearer
 * clients unaffected.
 */

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server.stop());

/** One Set-Cookie line, split into its value and attributes (names lower-cased). */
interface SetCookie {
  value: string;
  attrs: Map<string, string>;
}

function setCookies(headers: Headers): Map<string, SetCookie> {
  const out = new Map<string, SetCookie>();
  for (const line of headers.getSetCookie()) {
    const [pair, ...rest] = line.split(';').map((p) => p.trim());
    const eq = pair!.indexOf('=');
    const attrs = new Map(rest.map((a) => [a.split('=')[0]!.toLowerCase(), a.split('=')[1] ?? ''] as const));
    out.set(pair!.slice(0, eq), { value: pair!.slice(eq + 1), attrs });
  }
  return out;
}

/** What a browser holds after a cookie login: the three values. */
interface Jar {
  access: string;
  refresh: string;
  csrf: string;
}

const jarOf = (headers: Headers): Jar => {
  const c = setCookies(headers);
  return { access: c.get('cns_access')!.value, refresh: c.get('cns_refresh')!.value, csrf: c.get('cns_csrf')!.value };
};

/** The Cookie header a browser would send to an API path (all three cookies' paths cover /api/v1/auth). */
const cookieHeader = (jar: Jar, only?: (keyof Jar)[]) =>
  (only ?? (['access', 'refresh', 'csrf'] as const))
    .map((k) => `cns_${k}=${jar[k]}`)
    .join('; ');

async function cookieLogin(s = server, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<{ jar: Jar; res: Awaited<ReturnType<TestServer['api']>> }> {
  const res = await s.api('POST', '/auth/login', { body: { email, password, session: 'cookie' } });
  if (res.status !== 200) throw new Error(`cookie login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { jar: jarOf(res.headers), res };
}

const withCookies = (jar: Jar, csrf?: string, body?: unknown) => ({
  headers: { cookie: cookieHeader(jar), ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) },
  ...(body === undefined ? {} : { body }),
});

const orgNames = async (token: string) =>
  ((await server.api('GET', '/organizations?limit=100', { token })).body.data.organizations as { name: string }[]).map((o) => o.name);

test('a cookie login sets HttpOnly SameSite=Strict cookies on narrow paths and answers no token', async (t) => {
  const { res } = await cookieLogin();
  assertDocumented(t, server.services, 'post', '/auth/login', res);
  t.is(res.body.data.token_type, 'cookie');
  t.is(res.body.data.expires_in, 3600);
  t.is(res.body.data.user.email, ADMIN_EMAIL);
  t.false('access_token' in res.body.data);
  t.false('refresh_token' in res.body.data);

  const c = setCookies(res.headers);
  const access = c.get('cns_access')!;
  const refresh = c.get('cns_refresh')!;
  const csrf = c.get('cns_csrf')!;
  t.regex(access.value, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'the access cookie holds a JWT');
  t.regex(refresh.value, /^cnsr_/);
  t.false(JSON.stringify(res.body).includes(access.value), 'the access token is not in the answer');
  t.false(JSON.stringify(res.body).includes(refresh.value), 'the refresh token is not in the answer');

  t.deepEqual([access.attrs.get('path'), access.attrs.has('httponly'), access.attrs.get('samesite'), access.attrs.get('max-age')], ['/api', true, 'Strict', '3600']);
  t.deepEqual([refresh.attrs.get('path'), refresh.attrs.has('httponly'), refresh.attrs.get('samesite')], ['/api/v1/auth', true, 'Strict']);
  t.deepEqual([csrf.attrs.get('path'), csrf.attrs.has('httponly'), csrf.attrs.get('samesite')], ['/', false, 'Strict'], 'the page can read the CSRF token');
  t.false([access, refresh, csrf].some((x) => x.attrs.has('secure')), 'no Secure flag over plain http');
});

test('the cookies are Secure when the service is reached over https', async (t) => {
  const secure = await startTestServer({ baseUrl: 'https://cns.example.com' });
  t.teardown(() => secure.stop());
  const { res } = await cookieLogin(secure);
  const c = setCookies(res.headers);
  t.deepEqual(['cns_access', 'cns_refresh', 'cns_csrf'].map((n) => c.get(n)!.attrs.has('secure')), [true, true, true]);
});

test('a bearer login is unchanged: tokens in the answer, no cookies', async (t) => {
  const res = await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  t.is(res.body.data.token_type, 'bearer');
  t.regex(res.body.data.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.deepEqual(res.headers.getSetCookie(), []);
});

test('a cookie-authenticated GET works and tells when the access token expires', async (t) => {
  const { jar } = await cookieLogin();
  const me = await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(jar, ['access']) } });
  assertDocumented(t, server.services, 'get', '/auth/me', me);
  t.is(me.body.data.user.email, ADMIN_EMAIL);
  t.true(me.body.data.expires_in > 3500 && me.body.data.expires_in <= 3600, String(me.body.data.expires_in));
  const noCookie = await server.api('GET', '/auth/me');
  t.is(noCookie.status, 401);
});

test('a cookie-authenticated write needs the CSRF header: missing or wrong is 403 and changes nothing', async (t) => {
  // A user of its own: the other tests create organizations concurrently.
  const { token } = await server.createUser('csrf@example.com', 'csrf-password-1');
  const { jar } = await cookieLogin(server, 'csrf@example.com', 'csrf-password-1');
  const before = await orgNames(token);

  const missing = await server.api('POST', '/organizations', withCookies(jar, undefined, { name: 'Forged A' }));
  t.is(missing.status, 403);
  t.is(missing.body.error.code, 'FORBIDDEN');
  t.is(missing.body.error.details.reason, 'csrf_missing');
  t.regex(missing.body.message, /X-CSRF-Token/);

  const wrong = await server.api('POST', '/organizations', withCookies(jar, 'not-the-token', { name: 'Forged B' }));
  t.is(wrong.status, 403);
  t.is(wrong.body.error.details.reason, 'csrf_mismatch');

  // Plain double-submit would accept a cookie and header the attacker chose alike: these are bound to the sign-in.
  const planted = { ...jar, csrf: 'attacker-chosen' };
  const tossed = await server.api('POST', '/organizations', withCookies(planted, 'attacker-chosen', { name: 'Forged C' }));
  t.is(tossed.status, 403);
  const other = await cookieLogin(server, 'csrf@example.com', 'csrf-password-1');
  const foreign = await server.api('POST', '/organizations', withCookies(jar, other.jar.csrf, { name: 'Forged D' }));
  t.is(foreign.status, 403, "another sign-in's CSRF token does not pass");

  t.deepEqual(await orgNames(token), before, 'nothing was created');
  const rightDelete = await server.api('DELETE', '/organizations/org_missing', withCookies(jar, jar.csrf));
  t.is(rightDelete.status, 404, 'DELETE is checked like POST, and passes with the token');

  const good = await server.api('POST', '/organizations', withCookies(jar, jar.csrf, { name: 'Cookie org' }));
  t.is(good.status, 201);
  t.deepEqual((await orgNames(token)).sort(), [...before, 'Cookie org'].sort());
});

test('Bearer requests need no CSRF header, even alongside a session cookie', async (t) => {
  const { token } = await server.login();
  const { jar } = await cookieLogin();
  const plain = await server.api('POST', '/organizations', { token, body: { name: 'Bearer org' } });
  t.is(plain.status, 201);
  const both = await server.api('POST', '/organizations', { token, headers: { cookie: cookieHeader(jar) }, body: { name: 'Bearer org 2' } });
  t.is(both.status, 201, 'the Authorization header wins over the cookie');
});

test('a bearer token copied into the access cookie is not a session', async (t) => {
  const { token } = await server.login();
  const res = await server.api('GET', '/auth/me', { headers: { cookie: `cns_access=${token}` } });
  t.is(res.status, 401);
});

test('refresh through the cookie needs the CSRF header, rotates both cookies, and the old refresh cookie is refused', async (t) => {
  const { jar } = await cookieLogin();
  const forged = await server.api('POST', '/auth/refresh', withCookies(jar, undefined, {}));
  t.is(forged.status, 403);
  t.deepEqual(forged.headers.getSetCookie(), [], 'a refused refresh rotates nothing');

  const res = await server.api('POST', '/auth/refresh', withCookies(jar, jar.csrf, {}));
  assertDocumented(t, server.services, 'post', '/auth/refresh', res);
  t.is(res.body.data.token_type, 'cookie');
  t.is(res.body.data.user.email, ADMIN_EMAIL);
  t.false('refresh_token' in res.body.data);
  t.is(setCookies(res.headers).get('cns_access')?.attrs.get('max-age'), '3600', 'a fresh access cookie');
  const next = jarOf(res.headers);
  t.not(next.refresh, jar.refresh);
  t.is(next.csrf, jar.csrf, 'the CSRF token belongs to the sign-in, not to one access token');
  t.is((await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(next, ['access']) } })).status, 200);

  const replay = await server.api('POST', '/auth/refresh', withCookies(jar, jar.csrf, {}));
  t.is(replay.status, 401);
  t.is(replay.body.error.details.reason, 'reused');
  t.is(setCookies(replay.headers).get('cns_access')?.attrs.get('max-age'), '0', 'a refused refresh clears the cookies');
  const afterTheft = await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(next, ['access']) } });
  t.is(afterTheft.status, 401, 'reuse revoked the sign-in, and its access cookie with it');
});

test('refresh and logout without any refresh token are 401', async (t) => {
  const refresh = await server.api('POST', '/auth/refresh', { body: {} });
  t.is(refresh.status, 401);
  t.regex(refresh.body.message, /No refresh token/);
  const logout = await server.api('POST', '/auth/logout', { body: {} });
  t.is(logout.status, 401);
});

test('logout clears the cookies, and the old access and refresh cookies stop working at once', async (t) => {
  const { jar } = await cookieLogin();
  const forged = await server.api('POST', '/auth/logout', withCookies(jar, 'wrong', {}));
  t.is(forged.status, 403);
  t.is((await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(jar, ['access']) } })).status, 200, 'a forged logout ends nothing');

  const res = await server.api('POST', '/auth/logout', withCookies(jar, jar.csrf, {}));
  t.is(res.status, 200);
  t.deepEqual(res.body.data, { revoked: true });
  const cleared = setCookies(res.headers);
  t.deepEqual(['cns_access', 'cns_refresh', 'cns_csrf'].map((n) => [cleared.get(n)?.value, cleared.get(n)?.attrs.get('max-age')]), [
    ['', '0'],
    ['', '0'],
    ['', '0'],
  ]);

  const me = await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(jar, ['access']) } });
  t.is(me.status, 401, 'the access cookie is refused before it expires');
  t.is((await server.api('GET', '/auth/me', { token: jar.access })).status, 401, 'also when sent as a Bearer token');
  const refresh = await server.api('POST', '/auth/refresh', withCookies(jar, jar.csrf, {}));
  t.is(refresh.status, 401);
  t.is(refresh.body.error.details.reason, 'revoked');
});

test('a new cookie login revokes the sign-in the browser held before', async (t) => {
  const first = await cookieLogin();
  const res = await server.api('POST', '/auth/login', {
    headers: { cookie: cookieHeader(first.jar) },
    body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, session: 'cookie' },
  });
  t.is(res.status, 200);
  t.is((await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(first.jar, ['access']) } })).status, 401);
  t.is((await server.api('GET', '/auth/me', { headers: { cookie: cookieHeader(jarOf(res.headers), ['access']) } })).status, 200);
});
