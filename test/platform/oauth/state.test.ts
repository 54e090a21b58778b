import test from 'ava';
import { decodeJwt } from 'jose';
import nock from 'nock';
import { StateTokens } from '../../../src/platform/oauth/stateTokens.ts';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, appEnv, assertNoSecrets, isolateNetwork, providerRedirect, recorder, startOAuthServer, type OAuthTestServer, type Seen } from './helpers.ts';

// What the callback refuses: a tampered, expired or reused state (and its code), another user's
// state, a code the provider refuses; and what authorize refuses: open redirects, unconfigured
// providers, callers who may not write the project. GitHub and Linear are configured, Airtable not.

let server: OAuthTestServer;
let token: string;
let projectId: string;
const secrets: string[] = [];

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(appEnv(['github', 'linear']));
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

async function authorize(provider = 'github', redirect?: string, as = token, project = projectId): Promise<string> {
  const query = new URLSearchParams({ project_id: project, ...(redirect ? { redirect_uri: redirect } : {}) });
  const res = await server.api('GET', `/oauth/${provider}/authorize?${query}`, { token: as });
  if (res.status !== 200) throw new Error(`authorize: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.authorization_url;
}

/** GitHub's token endpoint, answering `access` once; the requests it got are in the array. */
function githubGrants(access: string): Seen[] {
  const seen: Seen[] = [];
  nock('https://github.com')
    .post('/login/oauth/access_token')
    .reply(recorder(seen, () => [200, { access_token: access, token_type: 'bearer', scope: 'repo,read:user' }]));
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' });
  secrets.push(access);
  return seen;
}

const withState = (url: string, state: string) => {
  const u = new URL(url);
  u.searchParams.set('state', state);
  return u.toString();
};

test.serial('a tampered state is refused without a token request, and does not spend the real one', async (t) => {
  const auth = await authorize();
  const back = providerRedirect(auth, 'code-tampered');
  const state = new URL(back).searchParams.get('state')!;
  const [h, p, sig] = state.split('.');
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>;
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, prj: 'prj_someoneelse' })).toString('base64url')}.${sig}`;
  const flipped = `${state.slice(0, -2)}${state.at(-2) === 'A' ? 'B' : 'A'}${state.at(-1)}`;
  for (const bad of [forged, flipped, 'not-a-jwt']) {
    const page = await server.browse(withState(back, bad));
    t.is(page.status, 422);
    t.regex(page.text, /The state is invalid or was altered/);
    t.false(page.text.includes('http-equiv="refresh"'), 'an unproven state redirects nowhere');
  }
  const missing = await server.browse(back.replace(/state=[^&]+/, ''));
  t.is(missing.status, 422);
  t.regex(missing.text, /state is missing/);

  const seen = githubGrants('gho_afterTamper1');
  const page = await server.browse(back);
  t.is(page.status, 200, page.text);
  t.is(seen.length, 1, 'only the real state reached GitHub');
});

test.serial('an expired state is refused (10 minutes)', async (t) => {
  const auth = await authorize();
  const back = providerRedirect(auth, 'code-expired');
  const claims = decodeJwt(new URL(back).searchParams.get('state')!);
  // The same request, signed 11 minutes ago with the server's key.
  const old = await new StateTokens(server.running.services.signingSecret).sign(
    { id: claims.jti!, userId: claims.sub!, projectId: claims.prj as string, provider: 'github' },
    Date.now() - 11 * 60_000,
  );
  const page = await server.browse(withState(back, old));
  t.is(page.status, 422);
  t.regex(page.text, /expired/);
});

test.serial('a replayed callback (same code and state) is refused; the code reaches the provider once', async (t) => {
  const auth = await authorize('github', '/back');
  const back = providerRedirect(auth, 'code-replayed');
  const seen = githubGrants('gho_replay1');
  t.is((await server.browse(back)).status, 200);
  const again = await server.browse(back);
  t.is(again.status, 422);
  t.regex(again.text, /already completed/);
  // The request it named is gone, and with it where to go: the page stays.
  t.false(again.text.includes('http-equiv="refresh"'));
  t.is(seen.length, 1);
  // And through the API: the same.
  const state = new URL(back).searchParams.get('state')!;
  const posted = await server.api('POST', '/oauth/github/callback', { token, body: { code: 'code-replayed', state } });
  t.is(posted.status, 422);
  t.is(posted.body.error.details[0].field, 'state');
});

test.serial('POST callback: another user is refused (without spending the state); the user who started it connects', async (t) => {
  const other = await server.user('other@example.com');
  const auth = await authorize('linear');
  const state = new URL(auth).searchParams.get('state')!;
  const refused = await server.api('POST', '/oauth/linear/callback', { token: other.token, body: { code: 'lin-code', state } });
  t.is(refused.status, 403);
  t.regex(refused.body.message, /another user/);
  const wrongProvider = await server.api('POST', '/oauth/github/callback', { token, body: { code: 'lin-code', state } });
  t.is(wrongProvider.status, 422);

  const seen: Seen[] = [];
  nock('https://api.linear.app')
    .post('/oauth/token')
    .reply(recorder(seen, () => [200, { access_token: 'lin_posted1', token_type: 'Bearer', expires_in: 86399, scope: 'read write', refresh_token: 'lin_posted_r1' }]))
    .post('/graphql')
    .reply(200, { data: { viewer: { id: 'v', name: 'Ada', email: null } } });
  secrets.push('lin_posted1', 'lin_posted_r1');
  const done = await server.api('POST', '/oauth/linear/callback', { token, body: { code: 'lin-code', state } });
  t.is(done.status, 201, JSON.stringify(done.body));
  assertDocumented(t, server.running.services, 'post', '/oauth/{provider}/callback', done);
  t.like(done.body.data, { provider: 'linear', connected: true, kind: 'oauth', account: 'Ada' });
  t.is((seen[0]!.body as Record<string, string>).redirect_uri, `${server.running.services.settings.baseUrl}/api/v1/oauth/callback`);
});

test.serial('a code the provider refuses (GitHub answers 200 with an error) is a 422 page in its words; nothing is stored', async (t) => {
  const other = await server.user('refused@example.com');
  const auth = await authorize('github', undefined, other.token, other.projectId);
  nock('https://github.com')
    .post('/login/oauth/access_token')
    .reply(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.', error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code' });
  const page = await server.browse(providerRedirect(auth, 'stale-code'));
  t.is(page.status, 422);
  t.regex(page.text, /GitHub refused the authorization code: bad_verification_code \(The code passed is incorrect or expired.\)/);
  t.like((await server.api('GET', `/oauth/github/status?project_id=${other.projectId}`, { token: other.token })).body.data, { connected: false });

  // The person declined at GitHub: no token request, the page says so.
  const declined = await authorize('github', '/declined', other.token, other.projectId);
  const back = new URL(providerRedirect(declined, 'unused'));
  back.searchParams.delete('code');
  back.searchParams.set('error', 'access_denied');
  back.searchParams.set('error_description', 'The user has denied your application access.');
  const denied = await server.browse(back.toString());
  t.is(denied.status, 403);
  t.regex(denied.text, /GitHub did not grant access: access_denied/);
  t.regex(denied.text, /\/declined\?oauth=error&amp;error=FORBIDDEN/);
});

test.serial('error pages escape what the provider sent', async (t) => {
  const auth = await authorize();
  const back = new URL(providerRedirect(auth, 'x'));
  back.searchParams.delete('code');
  back.searchParams.set('error', '<script>alert(1)</script>');
  const page = await server.browse(back.toString());
  t.false(page.text.includes('<script>'));
  t.true(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  t.regex(page.headers.get('content-security-policy')!, /default-src 'none'/);
});

test.serial('redirect_uri must stay on this service (no open redirect)', async (t) => {
  const base = server.running.services.settings.baseUrl;
  for (const bad of ['https://evil.example/steal', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', `${base.replace('127.0.0.1', 'localhost')}/x`, 'http://127.0.0.1:1/x']) {
    const res = await server.api('GET', `/oauth/github/authorize?${new URLSearchParams({ project_id: projectId, redirect_uri: bad })}`, { token });
    t.is(res.status, 422, bad);
    t.is(res.body.error.details[0].field, 'redirect_uri', bad);
  }
  for (const good of ['/settings', `${base}/app?tab=1`]) {
    t.is((await server.api('GET', `/oauth/github/authorize?${new URLSearchParams({ project_id: projectId, redirect_uri: good })}`, { token })).status, 200, good);
  }
});

test.serial('an unconfigured provider is 422 naming its two settings; an unknown one is 422', async (t) => {
  const res = await server.api('GET', `/oauth/airtable/authorize?project_id=${projectId}`, { token });
  t.is(res.status, 422);
  t.regex(res.body.message, /CNS_OAUTH_AIRTABLE_CLIENT_ID and CNS_OAUTH_AIRTABLE_CLIENT_SECRET/);
  t.deepEqual(res.body.error.details[0].settings, ['CNS_OAUTH_AIRTABLE_CLIENT_ID', 'CNS_OAUTH_AIRTABLE_CLIENT_SECRET']);
  t.like((await server.api('GET', `/oauth/airtable/status?project_id=${projectId}`, { token })).body.data, { connected: false, oauth_configured: false });
  const unknown = await server.api('GET', `/oauth/dropbox/authorize?project_id=${projectId}`, { token });
  t.is(unknown.status, 422);
  t.is(unknown.body.error.details[0].field, 'provider');
});

test.serial('who may: writers connect, readers see the status, strangers see nothing, keys do not connect', async (t) => {
  const viewer = await server.user('viewer@example.com');
  const stranger = await server.user('stranger@example.com');
  const members = await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  t.true([200, 201].includes(members.status), JSON.stringify(members.body));
  t.is((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token: viewer.token })).status, 200);
  t.is((await server.api('GET', `/oauth/github/authorize?project_id=${projectId}`, { token: viewer.token })).status, 403);
  t.is((await server.api('DELETE', `/oauth/github/disconnect?project_id=${projectId}`, { token: viewer.token })).status, 403);
  t.is((await server.api('POST', '/oauth/github/token', { token: viewer.token, body: { project_id: projectId, token: 'ghp_x' } })).status, 403);
  t.is((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token: stranger.token })).status, 404);
  t.is((await server.api('GET', `/oauth/github/authorize?project_id=${projectId}`, { token: stranger.token })).status, 404);
  t.is((await server.api('GET', `/oauth/github/status?project_id=${projectId}`)).status, 401);

  const key = await server.api('POST', '/connections/', { token, body: { project_id: projectId, name: 'k', kind: 'api', mode: 'read_write' } });
  const asKey = await server.api('GET', `/oauth/github/authorize?project_id=${projectId}`, { token: key.body.data.key });
  t.is(asKey.status, 403);
});

test.serial('no token is in the database files or the logs', (t) => {
  assertNoSecrets(t, server, secrets);
});
