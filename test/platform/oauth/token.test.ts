import test from 'ava';
import nock from 'nock';
import { NeedsReauth } from '../../../src/platform/runtime/credentials.ts';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, assertNoSecrets, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from './helpers.ts';

// Personal and integration tokens (POST /oauth/{provider}/token): checked with the provider in
// its own way before anything is stored. No OAuth app is configured: tokens do not need one.

let server: OAuthTestServer;
let token: string;
let projectId: string;
const secrets = ['ghp_personal0001', 'ghp_personal0002', 'secret_notionInternal01', 'lin_api_personalKey01', 'patAirtable01.deadbeef', 'ghp_refused0003', 'lin_api_refused02', 'patRefused02.x'];

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
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

const connect = (provider: string, value: string) => server.api('POST', `/oauth/${provider}/token`, { token, body: { project_id: projectId, token: value } });

test.serial('GitHub: a valid personal token is checked with GET /user and stored (201, then 200 when replaced)', async (t) => {
  const seen: Seen[] = [];
  nock('https://api.github.com')
    .get('/user')
    .times(2)
    .reply(recorder(seen, () => [200, { login: 'octocat', id: 1 }, { 'X-OAuth-Scopes': 'repo, read:org' }]));
  const res = await connect('github', 'ghp_personal0001');
  t.is(res.status, 201, JSON.stringify(res.body));
  assertDocumented(t, server.running.services, 'post', '/oauth/{provider}/token', res);
  t.like(res.body.data, { provider: 'github', connected: true, kind: 'token', account: 'octocat', scopes: ['repo', 'read:org'], expires_at: null, oauth_configured: false });
  t.is(seen[0]!.headers.get('authorization'), 'Bearer ghp_personal0001');
  t.is(seen[0]!.headers.get('x-github-api-version'), '2022-11-28');
  t.truthy(seen[0]!.headers.get('user-agent'));
  t.false(JSON.stringify(res.body).includes('ghp_'));

  const again = await connect('github', 'ghp_personal0002');
  t.is(again.status, 200);
  const credential = await server.running.services.oauth.credentials.get(projectId, 'github');
  t.deepEqual(credential, { kind: 'token', accessToken: 'ghp_personal0002', scopes: ['repo', 'read:org'], account: 'octocat' });
  // A personal token cannot be refreshed: a 401 on it marks the connection.
  await t.throwsAsync(server.running.services.oauth.credentials.afterUnauthorized(projectId, 'github', credential), { instanceOf: NeedsReauth, message: /POST \/oauth\/github\/token/ });
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: true });
  // Connecting again clears it; a token disconnect revokes nothing (the token is the person's).
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' });
  t.is((await connect('github', 'ghp_personal0002')).status, 200);
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: false });
  const gone = await server.api('DELETE', `/oauth/github/disconnect?project_id=${projectId}`, { token });
  t.like(gone.body.data, { revoked: false, revocation_error: null });
  t.regex(gone.body.data.revoke_manually, /GitHub/);
});

test.serial('GitHub: a refused token is 422 in GitHub\'s words and nothing is stored', async (t) => {
  nock('https://api.github.com').get('/user').reply(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
  const res = await connect('github', 'ghp_refused0003');
  t.is(res.status, 422);
  t.is(res.body.message, 'GitHub refused the token: Bad credentials');
  t.deepEqual(res.body.error.details, [{ field: 'token', message: 'GitHub refused the token: Bad credentials' }]);
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { connected: false });
});

test.serial('Notion: an internal integration token, checked with GET /v1/users/me and a Notion-Version', async (t) => {
  const seen: Seen[] = [];
  nock('https://api.notion.com')
    .get('/v1/users/me')
    .reply(recorder(seen, () => [200, { object: 'user', id: 'bot1', name: 'CNS sync', type: 'bot', bot: { owner: { type: 'workspace', workspace: true }, workspace_name: 'Acme' } }]));
  const res = await connect('notion', 'secret_notionInternal01');
  t.is(res.status, 201);
  t.like(res.body.data, { kind: 'token', account: 'Acme', scopes: [] });
  t.is(seen[0]!.headers.get('authorization'), 'Bearer secret_notionInternal01');
  t.truthy(seen[0]!.headers.get('notion-version'));
});

test.serial('Linear: a personal key goes without Bearer; a refused one is 422 with the GraphQL error', async (t) => {
  const seen: Seen[] = [];
  nock('https://api.linear.app')
    .post('/graphql')
    .reply(recorder(seen, () => [200, { data: { viewer: { id: 'u1', name: 'Ada', email: 'ada@example.com' } } }]))
    .post('/graphql')
    .reply(400, { errors: [{ message: 'Authentication required, not authenticated', extensions: { type: 'authentication error', code: 'AUTHENTICATION_ERROR', userPresentableMessage: 'You need to authenticate to access this operation.' } }] });
  const ok = await connect('linear', 'lin_api_personalKey01');
  t.is(ok.status, 201);
  t.like(ok.body.data, { kind: 'token', account: 'ada@example.com' });
  t.is(seen[0]!.headers.get('authorization'), 'lin_api_personalKey01');
  t.deepEqual(seen[0]!.body, { query: '{ viewer { id name email } }' });

  const refused = await connect('linear', 'lin_api_refused02');
  t.is(refused.status, 422);
  t.is(refused.body.message, 'Linear refused the token: Authentication required, not authenticated');
  t.like((await server.api('GET', `/oauth/linear/status?project_id=${projectId}`, { token })).body.data, { account: 'ada@example.com' }, 'the earlier key stays');
});

test.serial('Airtable: whoami gives the account and scopes; a refused token is 422; a provider outage is 502', async (t) => {
  nock('https://api.airtable.com')
    .get('/v0/meta/whoami')
    .reply(200, { id: 'usr1', email: 'grace@example.com', scopes: ['data.records:read', 'schema.bases:read'] })
    .get('/v0/meta/whoami')
    .reply(401, { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } })
    .get('/v0/meta/whoami')
    .reply(503, 'Service Unavailable');
  const res = await connect('airtable', 'patAirtable01.deadbeef');
  t.like(res.body.data, { kind: 'token', account: 'grace@example.com', scopes: ['data.records:read', 'schema.bases:read'] });
  const refused = await connect('airtable', 'patRefused02.x');
  t.is(refused.status, 422);
  t.is(refused.body.message, 'Airtable refused the token: Authentication required');
  const down = await connect('airtable', 'patRefused02.x');
  t.is(down.status, 502);
  t.regex(down.body.message, /airtable answered 503/);
});

test.serial('a token that could not be a header value is refused before anything is sent', async (t) => {
  const res = await connect('github', 'ghp with spaces\r\nX-Evil: 1');
  t.is(res.status, 422);
  t.is(res.body.error.details[0].field, 'token');
});

test.serial('no token is in the database files or the logs', (t) => {
  assertNoSecrets(t, server, secrets);
});
