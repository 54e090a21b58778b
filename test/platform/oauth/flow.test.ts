import test from 'ava';
import nock from 'nock';
import { SecretBox } from '../../../src/auth/secretBox.ts';
import { OAuthConnections } from '../../../src/platform/oauth/oauthConnectionStore.ts';
import { NeedsReauth } from '../../../src/platform/runtime/credentials.ts';
import { ProviderError } from '../../../src/platform/runtime/providerError.ts';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, APPS, appEnv, assertNoSecrets, basic, isolateNetwork, providerRedirect, recorder, s256, startOAuthServer, type OAuthTestServer, type Seen } from './helpers.ts';

// The authorization-code flow of each provider against nock'd providers at their real hosts, in
// their wire formats, through a real server: authorize → the browser's callback → token stored →
// status → refresh → disconnect. Serial: the providers' hosts are shared nock scopes.

let server: OAuthTestServer;
let token: string;
let projectId: string;
/** Every token, code and verifier the providers handed out in this file. */
const secrets: string[] = [];
const hooks: { event: string; projectId: string; provider: string }[] = [];

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(appEnv(['github', 'notion', 'linear', 'airtable']));
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  const oauth = server.running.services.oauth.service;
  oauth.onDisconnect((p, provider) => void hooks.push({ event: 'disconnected', projectId: p, provider }));
  oauth.onNeedsReauth((p, provider) => void hooks.push({ event: 'needs_reauth', projectId: p, provider }));
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

async function authorize(provider: string, redirect?: string): Promise<URL> {
  const query = new URLSearchParams({ project_id: projectId, ...(redirect ? { redirect_uri: redirect } : {}) });
  const res = await server.api('GET', `/oauth/${provider}/authorize?${query}`, { token });
  if (res.status !== 200) throw new Error(`authorize ${provider}: ${res.status} ${JSON.stringify(res.body)}`);
  return new URL(res.body.data.authorization_url);
}

const credentials = () => server.running.services.oauth.credentials;

test.serial('GitHub: authorize → callback (PKCE, client_secret_post) → status → refresh on get → disconnect revokes the token', async (t) => {
  const redirect = '/app/settings/integrations';
  const query = new URLSearchParams({ project_id: projectId, redirect_uri: redirect });
  const started = await server.api('GET', `/oauth/github/authorize?${query}`, { token });
  t.is(started.status, 200);
  assertDocumented(t, server.running.services, 'get', '/oauth/{provider}/authorize', started);
  const callbackUrl = `${server.running.services.settings.baseUrl}/api/v1/oauth/callback`;
  t.is(started.body.data.redirect_uri, callbackUrl);
  const auth = new URL(started.body.data.authorization_url);
  t.is(`${auth.origin}${auth.pathname}`, 'https://github.com/login/oauth/authorize');
  t.is(auth.searchParams.get('client_id'), APPS.github.id);
  t.is(auth.searchParams.get('response_type'), 'code');
  t.is(auth.searchParams.get('redirect_uri'), callbackUrl);
  t.is(auth.searchParams.get('scope'), 'repo read:user');
  t.is(auth.searchParams.get('code_challenge_method'), 'S256');
  const challenge = auth.searchParams.get('code_challenge')!;
  t.regex(challenge, /^[A-Za-z0-9_-]{43}$/);
  t.truthy(auth.searchParams.get('state'));

  // GitHub answers JSON because openid-client asks for it (Accept: application/json).
  const seen: Seen[] = [];
  nock('https://github.com')
    .post('/login/oauth/access_token')
    .reply(recorder(seen, () => [200, { access_token: 'gho_firstAccess111', token_type: 'bearer', scope: 'repo,read:user', refresh_token: 'ghr_firstRefresh111', expires_in: 30, refresh_token_expires_in: 15897600 }]));
  const user: Seen[] = [];
  nock('https://api.github.com').get('/user').reply(recorder(user, () => [200, { login: 'octocat', id: 1 }]));

  const page = await server.browse(providerRedirect(auth.toString(), 'gh-code-1'));
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type')!, /text\/html/);
  t.is(page.headers.get('referrer-policy'), 'no-referrer');
  t.regex(page.text, /GitHub connected/);
  t.regex(page.text, /as octocat/);
  const target = new URL(`${server.running.services.settings.baseUrl}${redirect}?oauth=connected&provider=github`).toString();
  t.true(page.text.includes(`<meta http-equiv="refresh" content="2;url=${target.replace(/&/g, '&amp;')}">`), page.text);

  t.is(seen.length, 1);
  const exchange = seen[0]!;
  t.is(exchange.headers.get('accept'), 'application/json');
  t.regex(exchange.headers.get('content-type')!, /application\/x-www-form-urlencoded/);
  t.is(exchange.headers.get('authorization'), null, 'GitHub takes the client credentials in the form');
  const form = exchange.body as Record<string, string>;
  t.is(form.grant_type, 'authorization_code');
  t.is(form.code, 'gh-code-1');
  t.is(form.redirect_uri, callbackUrl);
  t.is(form.client_id, APPS.github.id);
  t.is(form.client_secret, APPS.github.secret);
  t.is(s256(form.code_verifier!), challenge, 'the verifier kept on the server matches the challenge sent');
  secrets.push('gho_firstAccess111', 'ghr_firstRefresh111', form.code_verifier!);
  t.is(user[0]!.headers.get('authorization'), 'Bearer gho_firstAccess111');
  t.truthy(user[0]!.headers.get('user-agent'));

  const status = await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token });
  t.is(status.status, 200);
  assertDocumented(t, server.running.services, 'get', '/oauth/{provider}/status', status);
  t.like(status.body.data, { provider: 'github', connected: true, kind: 'oauth', account: 'octocat', scopes: ['repo', 'read:user'], needs_reauth: false, oauth_configured: true });
  t.truthy(status.body.data.expires_at);
  t.truthy(status.body.data.connected_at);
  t.false(JSON.stringify(status.body).includes('gho_'));

  // The access token expires within the refresh margin: `get` refreshes first, once for concurrent callers.
  const refreshes: Seen[] = [];
  nock('https://github.com')
    .post('/login/oauth/access_token')
    .reply(recorder(refreshes, () => [200, { access_token: 'gho_secondAccess222', token_type: 'bearer', scope: 'repo,read:user', refresh_token: 'ghr_secondRefresh222', expires_in: 28800 }]));
  const [a, b] = await Promise.all([credentials().get(projectId, 'github'), credentials().get(projectId, 'github')]);
  t.is(refreshes.length, 1);
  t.like(refreshes[0]!.body as object, { grant_type: 'refresh_token', refresh_token: 'ghr_firstRefresh111', client_id: APPS.github.id, client_secret: APPS.github.secret });
  t.deepEqual(a, { kind: 'oauth', accessToken: 'gho_secondAccess222', scopes: ['repo', 'read:user'], account: 'octocat' });
  t.deepEqual(b, a);
  secrets.push('gho_secondAccess222', 'ghr_secondRefresh222');
  // Fresh now: no request.
  t.is((await credentials().get(projectId, 'github')).accessToken, 'gho_secondAccess222');
  // A 401 on a token refreshed meanwhile: the stored one is returned, nothing is sent.
  t.is((await credentials().afterUnauthorized(projectId, 'github', { ...a, accessToken: 'gho_firstAccess111' })).accessToken, 'gho_secondAccess222');

  assertNoSecrets(t, server, secrets);

  const revocations: Seen[] = [];
  nock('https://api.github.com')
    .delete(`/applications/${APPS.github.id}/token`)
    .reply(recorder(revocations, () => [204]));
  const gone = await server.api('DELETE', `/oauth/github/disconnect?project_id=${projectId}`, { token });
  t.is(gone.status, 200);
  assertDocumented(t, server.running.services, 'delete', '/oauth/{provider}/disconnect', gone);
  t.like(gone.body.data, { provider: 'github', disconnected: true, revoked: true, revocation_error: null });
  t.is(revocations.length, 1);
  t.is(revocations[0]!.headers.get('authorization'), basic(APPS.github.id, APPS.github.secret));
  t.deepEqual(revocations[0]!.body, { access_token: 'gho_secondAccess222' });
  t.deepEqual(hooks.filter((h) => h.event === 'disconnected'), [{ event: 'disconnected', projectId, provider: 'github' }]);
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { connected: false, kind: null, account: null });
  await t.throwsAsync(credentials().get(projectId, 'github'), { instanceOf: NeedsReauth });
  t.is((await server.api('DELETE', `/oauth/github/disconnect?project_id=${projectId}`, { token })).status, 404);
});

test.serial('a refresh that ends after a reconnect (from another process) keeps the new grant and hands it out', async (t) => {
  const { metadata, signingSecret } = server.running.services;
  // Another process's view of the same table: its writes do not take this process's lock.
  const elsewhere = new OAuthConnections(metadata, new SecretBox(signingSecret, 'oauth-tokens'));
  const soon = new Date(Date.now() + 5_000).toISOString();
  const grant = { projectId, provider: 'github', kind: 'oauth' as const, account: 'octocat', scopes: ['repo'], connectedBy: null };
  await elsewhere.save({ ...grant, accessToken: 'gho_oldGrant888', refreshToken: 'ghr_oldGrant888', expiresAt: soon });
  const refreshes: Seen[] = [];
  const record = recorder(refreshes, () => [200, { access_token: 'gho_refreshedOld888', token_type: 'bearer', scope: 'repo', refresh_token: 'ghr_refreshedOld888', expires_in: 28800 }]);
  nock('https://github.com')
    .post('/login/oauth/access_token')
    .reply(async (request: Request) => {
      // The provider answers only after the reconnect is stored.
      await elsewhere.save({ ...grant, accessToken: 'gho_newGrant999', refreshToken: 'ghr_newGrant999', expiresAt: null });
      return record(request);
    });
  secrets.push('gho_oldGrant888', 'ghr_oldGrant888', 'gho_newGrant999', 'ghr_newGrant999', 'gho_refreshedOld888', 'ghr_refreshedOld888');
  const got = await credentials().get(projectId, 'github');
  t.is(refreshes.length, 1);
  t.is(got.accessToken, 'gho_newGrant999');
  t.like(await elsewhere.find(projectId, 'github'), { accessToken: 'gho_newGrant999', refreshToken: 'ghr_newGrant999' });
  await elsewhere.delete((await elsewhere.find(projectId, 'github'))!.id);
});

test.serial('Notion: no PKCE, owner=user; JSON token requests with Basic auth; a refused refresh marks needs_reauth', async (t) => {
  const auth = await authorize('notion');
  t.is(`${auth.origin}${auth.pathname}`, 'https://api.notion.com/v1/oauth/authorize');
  t.is(auth.searchParams.get('owner'), 'user');
  t.is(auth.searchParams.get('code_challenge'), null);
  t.is(auth.searchParams.get('scope'), null);

  const seen: Seen[] = [];
  nock('https://api.notion.com')
    .post('/v1/oauth/token')
    .reply(
      recorder(seen, () => [
        200,
        {
          access_token: 'ntn_access333',
          refresh_token: 'ntn_refresh333',
          token_type: 'bearer',
          expires_in: 10,
          bot_id: 'b0b',
          workspace_name: 'Acme Docs',
          workspace_id: 'w1',
          owner: { type: 'user', user: { object: 'user', id: 'u1' } },
          duplicated_template_id: null,
          request_id: 'r1',
        },
      ]),
    );
  const page = await server.browse(providerRedirect(auth.toString(), 'notion-code-1'));
  t.is(page.status, 200, page.text);
  t.regex(page.text, /as Acme Docs/);
  t.false(page.text.includes('http-equiv="refresh"'), 'no redirect_uri: no redirect');
  const exchange = seen[0]!;
  t.is(exchange.headers.get('authorization'), basic(APPS.notion.id, APPS.notion.secret));
  t.regex(exchange.headers.get('content-type')!, /application\/json/);
  t.truthy(exchange.headers.get('notion-version'));
  t.deepEqual(exchange.body, { code: 'notion-code-1', redirect_uri: `${server.running.services.settings.baseUrl}/api/v1/oauth/callback`, grant_type: 'authorization_code' });
  secrets.push('ntn_access333', 'ntn_refresh333');

  nock('https://api.notion.com')
    .post('/v1/oauth/token')
    .reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  const err = await t.throwsAsync(credentials().get(projectId, 'notion'), { instanceOf: NeedsReauth });
  t.regex(err!.message, /invalid_grant/);
  t.deepEqual(hooks.filter((h) => h.event === 'needs_reauth'), [{ event: 'needs_reauth', projectId, provider: 'notion' }]);
  t.like((await server.api('GET', `/oauth/notion/status?project_id=${projectId}`, { token })).body.data, { connected: true, needs_reauth: true, account: 'Acme Docs' });
  // Marked: no more requests, the same answer.
  await t.throwsAsync(credentials().get(projectId, 'notion'), { instanceOf: NeedsReauth });
  t.is(hooks.filter((h) => h.event === 'needs_reauth').length, 1, 'the listeners hear it once');

  const revoke: Seen[] = [];
  nock('https://api.notion.com').post('/v1/oauth/revoke').reply(recorder(revoke, () => [200, { request_id: 'r2' }]));
  const gone = await server.api('DELETE', `/oauth/notion/disconnect?project_id=${projectId}`, { token });
  t.like(gone.body.data, { revoked: true });
  t.is(revoke[0]!.headers.get('authorization'), basic(APPS.notion.id, APPS.notion.secret));
  t.deepEqual(revoke[0]!.body, { token: 'ntn_access333' });
});

test.serial('Linear: comma-separated scopes, PKCE, client_secret_post; a 401 refreshes once; disconnect revokes both tokens (RFC 7009)', async (t) => {
  const auth = await authorize('linear');
  t.is(`${auth.origin}${auth.pathname}`, 'https://linear.app/oauth/authorize');
  t.is(auth.searchParams.get('scope'), 'read,write');
  const challenge = auth.searchParams.get('code_challenge')!;
  t.is(auth.searchParams.get('code_challenge_method'), 'S256');

  const seen: Seen[] = [];
  nock('https://api.linear.app')
    .post('/oauth/token')
    .reply(recorder(seen, () => [200, { access_token: 'lin_oauth_access444', token_type: 'Bearer', expires_in: 86399, scope: 'read write', refresh_token: 'lin_refresh444' }]))
    .post('/graphql')
    .reply(200, { data: { viewer: { id: 'v1', name: 'Ada', email: 'ada@example.com' } } });
  const page = await server.browse(providerRedirect(auth.toString(), 'lin-code-1'));
  t.is(page.status, 200, page.text);
  const form = seen[0]!.body as Record<string, string>;
  t.like(form, { grant_type: 'authorization_code', code: 'lin-code-1', client_id: APPS.linear.id, client_secret: APPS.linear.secret });
  t.is(s256(form.code_verifier!), challenge);
  secrets.push('lin_oauth_access444', 'lin_refresh444', form.code_verifier!);
  t.like((await server.api('GET', `/oauth/linear/status?project_id=${projectId}`, { token })).body.data, { account: 'ada@example.com', scopes: ['read', 'write'] });

  const current = await credentials().get(projectId, 'linear');
  t.is(current.accessToken, 'lin_oauth_access444');
  const refresh: Seen[] = [];
  nock('https://api.linear.app')
    .post('/oauth/token')
    .reply(recorder(refresh, () => [200, { access_token: 'lin_oauth_access555', token_type: 'Bearer', expires_in: 86399, scope: 'read write', refresh_token: 'lin_refresh555' }]));
  const renewed = await credentials().afterUnauthorized(projectId, 'linear', current);
  t.is(renewed.accessToken, 'lin_oauth_access555');
  t.like(refresh[0]!.body as object, { grant_type: 'refresh_token', refresh_token: 'lin_refresh444' });
  secrets.push('lin_oauth_access555', 'lin_refresh555');

  const revoked: Seen[] = [];
  nock('https://api.linear.app')
    .post('/oauth/revoke')
    .times(2)
    .reply(recorder(revoked, () => [200]));
  const gone = await server.api('DELETE', `/oauth/linear/disconnect?project_id=${projectId}`, { token });
  t.like(gone.body.data, { revoked: true });
  t.deepEqual(
    revoked.map((r) => r.body),
    [
      { token: 'lin_refresh555', token_type_hint: 'refresh_token', client_id: APPS.linear.id, client_secret: APPS.linear.secret },
      { token: 'lin_oauth_access555', token_type_hint: 'access_token', client_id: APPS.linear.id, client_secret: APPS.linear.secret },
    ],
  );
});

test.serial('Airtable: PKCE and Basic auth; the rotated refresh token is kept; no revocation endpoint, so disconnect says where to revoke', async (t) => {
  const auth = await authorize('airtable', `${server.running.services.settings.baseUrl}/done`);
  t.is(auth.searchParams.get('scope'), 'data.records:read data.records:write schema.bases:read user.email:read');
  const challenge = auth.searchParams.get('code_challenge')!;
  const seen: Seen[] = [];
  nock('https://airtable.com')
    .post('/oauth2/v1/token')
    .reply(recorder(seen, () => [200, { access_token: 'atk_access666', refresh_token: 'atk_refresh666', token_type: 'Bearer', scope: 'data.records:read data.records:write schema.bases:read user.email:read', expires_in: 5, refresh_expires_in: 5184000 }]));
  nock('https://api.airtable.com').get('/v0/meta/whoami').reply(200, { id: 'usrA', email: 'grace@example.com', scopes: ['data.records:read'] });
  const page = await server.browse(providerRedirect(auth.toString(), 'at-code-1'));
  t.is(page.status, 200, page.text);
  t.regex(page.text, /url=http:\/\/127\.0\.0\.1:\d+\/done\?oauth=connected&amp;provider=airtable/);
  t.is(seen[0]!.headers.get('authorization'), basic(APPS.airtable.id, APPS.airtable.secret));
  const form = seen[0]!.body as Record<string, string | undefined>;
  t.is(s256(form.code_verifier!), challenge);
  t.false('client_secret' in form, 'Basic auth: no secret in the form');
  secrets.push('atk_access666', 'atk_refresh666', form.code_verifier!);

  // Airtable down: the run fails with its words, the connection stays as it was (no needs_reauth).
  nock('https://airtable.com').post('/oauth2/v1/token').reply(503, 'upstream connect error');
  const down = await t.throwsAsync(credentials().get(projectId, 'airtable'), { instanceOf: ProviderError });
  t.is(down!.status, 503);
  t.like((await server.api('GET', `/oauth/airtable/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: false });

  const refresh: Seen[] = [];
  nock('https://airtable.com')
    .post('/oauth2/v1/token')
    .reply(recorder(refresh, () => [200, { access_token: 'atk_access777', refresh_token: 'atk_refresh777', token_type: 'Bearer', expires_in: 3600, refresh_expires_in: 5184000 }]));
  t.is((await credentials().get(projectId, 'airtable')).accessToken, 'atk_access777');
  t.like(refresh[0]!.body as object, { grant_type: 'refresh_token', refresh_token: 'atk_refresh666' });
  t.is(refresh[0]!.headers.get('authorization'), basic(APPS.airtable.id, APPS.airtable.secret));
  secrets.push('atk_access777', 'atk_refresh777');

  const gone = await server.api('DELETE', `/oauth/airtable/disconnect?project_id=${projectId}`, { token });
  t.like(gone.body.data, { disconnected: true, revoked: false, revocation_error: null });
  t.regex(gone.body.data.revoke_manually, /Airtable/);
});

test.serial('no token, refresh token or PKCE verifier is in the database files or the logs', (t) => {
  assertNoSecrets(t, server, secrets);
  t.true(secrets.length >= 12);
});
