import test from 'ava';
import nock from 'nock';
import { NeedsReauth } from '../../../src/platform/runtime/credentials.ts';
import { connectGoogle, GOOGLE_ACCOUNT, GOOGLE_APP, GOOGLE_OAUTH, googleEnv } from '../connectors/fixtures/google/connectGoogle.ts';
import { ADMIN, assertNoSecrets, isolateNetwork, providerRedirect, recorder, s256, startOAuthServer, type OAuthTestServer, type Seen } from './helpers.ts';

// The five Google providers' OAuth: one Google app, Google's real hosts on nock in its wire
// format (token answers as its OAuth 2.0 web-server guide shows them), through a real server.
// Serial: the hosts are shared nock scopes.

let server: OAuthTestServer;
let token: string;
let projectId: string;
const secrets: string[] = [];

const EMAIL_SCOPE = 'https://www.googleapis.com/auth/userinfo.email';

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
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

const credentials = () => server.running.services.oauth.credentials;
const status = async (provider: string) => (await server.api('GET', `/oauth/${provider}/status?project_id=${projectId}`, { token })).body.data;

async function authorize(provider: string): Promise<URL> {
  const res = await server.api('GET', `/oauth/${provider}/authorize?project_id=${projectId}`, { token });
  if (res.status !== 200) throw new Error(`authorize ${provider}: ${res.status} ${JSON.stringify(res.body)}`);
  return new URL(res.body.data.authorization_url);
}

test.serial('each Google provider asks its own narrowest scopes (plus the email) of the one Google app, offline, incremental, with consent and PKCE', async (t) => {
  const expected: Record<string, string[]> = {
    gmail: ['https://www.googleapis.com/auth/gmail.readonly'],
    'google-calendar': ['https://www.googleapis.com/auth/calendar.readonly'],
    'google-drive': ['https://www.googleapis.com/auth/drive.readonly'],
    'google-docs': ['https://www.googleapis.com/auth/documents', 'https://www.googleapis.com/auth/drive.metadata.readonly'],
    'google-sheets': ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive.metadata.readonly'],
  };
  const callbackUrl = `${server.running.services.settings.baseUrl}/api/v1/oauth/callback`;
  const challenges = new Set<string>();
  for (const [provider, scopes] of Object.entries(expected)) {
    const auth = await authorize(provider);
    t.is(`${auth.origin}${auth.pathname}`, 'https://accounts.google.com/o/oauth2/v2/auth', provider);
    t.is(auth.searchParams.get('client_id'), GOOGLE_APP.id);
    t.is(auth.searchParams.get('response_type'), 'code');
    t.is(auth.searchParams.get('redirect_uri'), callbackUrl);
    t.deepEqual(auth.searchParams.get('scope')!.split(' '), [...scopes, EMAIL_SCOPE], provider);
    t.is(auth.searchParams.get('access_type'), 'offline');
    t.is(auth.searchParams.get('include_granted_scopes'), 'true');
    t.is(auth.searchParams.get('prompt'), 'consent');
    t.is(auth.searchParams.get('code_challenge_method'), 'S256');
    t.regex(auth.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    challenges.add(auth.searchParams.get('code_challenge')!);
    t.truthy(auth.searchParams.get('state'));
  }
  t.is(challenges.size, 5, 'a fresh PKCE pair per authorization');
  // Read-only where the sync only pulls.
  t.false(expected.gmail!.some((s) => !s.endsWith('.readonly')));
});

test.serial('Gmail: the callback exchanges the code (client_secret_post, PKCE verifier) and names the account from UserInfo', async (t) => {
  const auth = await authorize('gmail');
  const seen: Seen[] = [];
  nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(
      recorder(seen, () => [
        200,
        {
          access_token: 'ya29.a0AfH6SMgmailAccess1',
          expires_in: 3599,
          refresh_token: '1//0gmailRefresh1',
          // Incremental authorization: the scopes the app had before come back too.
          scope: `${EMAIL_SCOPE} https://www.googleapis.com/auth/gmail.readonly https://www.googleapis.com/auth/calendar.readonly`,
          token_type: 'Bearer',
        },
      ]),
    );
  const userinfo: Seen[] = [];
  nock('https://www.googleapis.com')
    .get('/oauth2/v3/userinfo')
    .reply(recorder(userinfo, () => [200, { sub: '110248495921238986420', picture: 'https://lh3.googleusercontent.com/a/x', email: 'grace@example.com', email_verified: true }]));

  const page = await server.browse(providerRedirect(auth.toString(), '4/0AY0e-g7code'));
  t.is(page.status, 200, page.text);
  t.regex(page.text, /Gmail connected/);
  t.regex(page.text, /as grace@example\.com/);

  t.is(seen.length, 1);
  const exchange = seen[0]!;
  t.regex(exchange.headers.get('content-type')!, /application\/x-www-form-urlencoded/);
  t.is(exchange.headers.get('authorization'), null, 'Google takes the client credentials in the form');
  const form = exchange.body as Record<string, string>;
  t.is(form.grant_type, 'authorization_code');
  t.is(form.code, '4/0AY0e-g7code');
  t.is(form.redirect_uri, `${server.running.services.settings.baseUrl}/api/v1/oauth/callback`);
  t.is(form.client_id, GOOGLE_APP.id);
  t.is(form.client_secret, GOOGLE_APP.secret);
  t.is(s256(form.code_verifier!), auth.searchParams.get('code_challenge')!);
  t.is(userinfo.length, 1);
  t.is(userinfo[0]!.headers.get('authorization'), 'Bearer ya29.a0AfH6SMgmailAccess1');
  t.false(userinfo[0]!.url.search.includes('ya29'), 'the token travels in a header, never in a URL');
  secrets.push('ya29.a0AfH6SMgmailAccess1', '1//0gmailRefresh1', form.code_verifier!);

  const s = await status('gmail');
  t.like(s, { provider: 'gmail', connected: true, kind: 'oauth', account: 'grace@example.com', needs_reauth: false, oauth_configured: true });
  t.deepEqual(s.scopes, [EMAIL_SCOPE, 'https://www.googleapis.com/auth/gmail.readonly', 'https://www.googleapis.com/auth/calendar.readonly']);
  t.true(Date.parse(s.expires_at) > Date.now() + 3_000_000);
  // One connection per provider, though the app is shared.
  t.like(await status('google-calendar'), { connected: false, oauth_configured: true });
  assertNoSecrets(t, server, secrets);
});

test.serial('an expired access token is refreshed on use; Google sends no new refresh token, so the first one is kept and revoked at disconnect', async (t) => {
  await connectGoogle(server, token, projectId, 'google-calendar', { accessToken: 'ya29.calShortLived', refreshToken: '1//0calRefresh', expiresIn: 30 });
  t.like(await status('google-calendar'), { connected: true, account: GOOGLE_ACCOUNT });
  secrets.push('ya29.calShortLived', '1//0calRefresh');

  const refreshes: Seen[] = [];
  nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(
      recorder(refreshes, () => [
        200,
        { access_token: 'ya29.calFresh2', expires_in: 3599, scope: `https://www.googleapis.com/auth/calendar.readonly ${EMAIL_SCOPE}`, token_type: 'Bearer' },
      ]),
    );
  const [a, b] = await Promise.all([credentials().get(projectId, 'google-calendar'), credentials().get(projectId, 'google-calendar')]);
  t.is(refreshes.length, 1, 'one refresh for concurrent callers');
  t.deepEqual(refreshes[0]!.body, { grant_type: 'refresh_token', refresh_token: '1//0calRefresh', client_id: GOOGLE_APP.id, client_secret: GOOGLE_APP.secret });
  t.like(a, { kind: 'oauth', accessToken: 'ya29.calFresh2', account: GOOGLE_ACCOUNT });
  t.deepEqual(b, a);
  secrets.push('ya29.calFresh2');
  t.true(Date.parse((await status('google-calendar')).expires_at) > Date.now() + 3_000_000);

  // Revocation: the refresh token (Google ends the whole grant with it), as a form.
  const revoked: Seen[] = [];
  nock(GOOGLE_OAUTH).post('/revoke').reply(recorder(revoked, () => [200, {}]));
  const gone = await server.api('DELETE', `/oauth/google-calendar/disconnect?project_id=${projectId}`, { token });
  t.is(gone.status, 200, JSON.stringify(gone.body));
  t.like(gone.body.data, { provider: 'google-calendar', disconnected: true, revoked: true, revocation_error: null, revoke_manually: null });
  t.is(revoked.length, 1);
  t.regex(revoked[0]!.headers.get('content-type')!, /application\/x-www-form-urlencoded/);
  t.like(revoked[0]!.body as object, { token: '1//0calRefresh', token_type_hint: 'refresh_token' });
  t.like(await status('google-calendar'), { connected: false });
  await t.throwsAsync(credentials().get(projectId, 'google-calendar'), { instanceOf: NeedsReauth });
  assertNoSecrets(t, server, secrets);
});

test.serial('a refresh Google refuses (invalid_grant: the person removed the app) marks the connection needs_reauth; a failed revocation is reported and the tokens go anyway', async (t) => {
  await connectGoogle(server, token, projectId, 'google-drive', { accessToken: 'ya29.driveOld', refreshToken: '1//0driveRefresh', expiresIn: 10 });
  nock(GOOGLE_OAUTH).post('/token').reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  const err = await t.throwsAsync(credentials().get(projectId, 'google-drive'), { instanceOf: NeedsReauth });
  t.regex(err!.message, /Google Drive refused to refresh the token: invalid_grant \(Token has been expired or revoked\.\)/);
  t.regex(err!.message, /GET \/oauth\/google-drive\/authorize/);
  t.like(await status('google-drive'), { connected: true, needs_reauth: true });

  nock(GOOGLE_OAUTH).post('/revoke').reply(400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
  const gone = await server.api('DELETE', `/oauth/google-drive/disconnect?project_id=${projectId}`, { token });
  t.is(gone.status, 200);
  t.like(gone.body.data, { revoked: false, revoke_manually: 'Google Account → Security → Your connections to third-party apps & services' });
  t.regex(gone.body.data.revocation_error, /invalid_token/);
  t.like(await status('google-drive'), { connected: false });
});

test.serial('no personal tokens: POST /oauth/{google provider}/token is 422 saying OAuth only, and asks Google nothing', async (t) => {
  for (const provider of ['gmail', 'google-docs', 'google-sheets']) {
    const res = await server.api('POST', `/oauth/${provider}/token`, { token, body: { project_id: projectId, token: 'ya29.someoneElsesToken' } });
    t.is(res.status, 422, provider);
    t.regex(res.body.message, /through OAuth only/);
    t.regex(res.body.message, new RegExp(`GET /oauth/${provider}/authorize`));
    t.is(res.body.error.details[0].field, 'token');
  }
  t.like(await status('google-docs'), { connected: false });
  t.true(nock.isDone());
});

test.serial('without CNS_OAUTH_GOOGLE_CLIENT_ID/_SECRET every Google provider is 422 naming the two settings', async (t) => {
  const bare = await startOAuthServer({});
  try {
    const admin = await bare.login(ADMIN.email, ADMIN.password);
    const project = (await bare.api('POST', '/auth/initialize', { token: admin })).body.data.project.id;
    for (const provider of ['gmail', 'google-drive', 'google-docs', 'google-sheets', 'google-calendar']) {
      const res = await bare.api('GET', `/oauth/${provider}/authorize?project_id=${project}`, { token: admin });
      t.is(res.status, 422, provider);
      t.regex(res.body.message, /CNS_OAUTH_GOOGLE_CLIENT_ID and CNS_OAUTH_GOOGLE_CLIENT_SECRET/);
      t.deepEqual(res.body.error.details[0].settings, ['CNS_OAUTH_GOOGLE_CLIENT_ID', 'CNS_OAUTH_GOOGLE_CLIENT_SECRET']);
      t.like((await bare.api('GET', `/oauth/${provider}/status?project_id=${project}`, { token: admin })).body.data, { connected: false, oauth_configured: false });
    }
  } finally {
    await bare.stop();
  }
});
