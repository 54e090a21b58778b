import test from 'ava';
import nock from 'nock';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from '../oauth/helpers.ts';
import { connectGoogle, GOOGLE_ACCOUNT, GOOGLE_APP, GOOGLE_OAUTH, googleEnv } from './fixtures/google/connectGoogle.ts';
import { FakeGmail } from './fixtures/google/fakeGmail.ts';

// The Gmail connector end to end: a real server and runtime, connected through the real Google
// OAuth flow (Google's token endpoint on nock), the mailbox on nock (FakeGmail). The tests run in
// order on one sync: each starts from where the one before left the mailbox and the project.

const FOLDER = 'mail';
const T0 = Date.parse('2024-05-01T09:30:00.000Z');
const DAY = 86_400_000;

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const gmail = new FakeGmail();
const order = gmail.add({
  from: 'Shop <orders@shop.example>',
  to: 'ada.lovelace@example.com',
  subject: 'Your order #1234',
  at: T0,
  labels: ['INBOX', 'Label_1'],
  text: 'Thanks for your order.',
});
const reply = gmail.add({ threadId: order, from: 'ada.lovelace@example.com', to: 'orders@shop.example', subject: 'Re: Your order #1234', at: T0 + DAY, labels: ['SENT', 'Label_1'], text: 'When will it ship?' });
const invoice = gmail.add({
  from: 'Billing <billing@power.example>',
  to: 'ada.lovelace@example.com',
  subject: 'Invoice May',
  at: T0 + 2 * DAY,
  labels: ['INBOX', 'Label_1'],
  html: '<p>Your <b>invoice</b> is attached.</p>',
  attachments: [{ filename: 'invoice.pdf', mimeType: 'application/pdf', data: Buffer.from('%PDF-1.7 invoice') }],
});
gmail.add({ from: 'Friend <friend@example.com>', to: 'ada.lovelace@example.com', subject: 'Lunch?', at: T0, labels: ['INBOX'], text: 'Noon?' });

const refresh = async () => {
  const res = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(`${FOLDER}/${path}`)}`, { token });
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/gmail/status?project_id=${projectId}`, { token })).body.data;
/** Every file (not folder) under the sync's folder. */
const files = async () => {
  const tree = await server.api('GET', `/content/${projectId}/tree?path=${FOLDER}`, { token });
  const out: string[] = [];
  const walk = (n: { path: string; type: string; children?: unknown[] }) => {
    if (n.type !== 'folder') out.push(n.path);
    for (const c of n.children ?? []) walk(c as typeof n);
  };
  walk(tree.body.data);
  return out.sort();
};
const bearers = () => new Set(gmail.seen.map((s) => s.headers.authorization));

/** Google's token endpoint answering one refresh, recorded. */
function refreshAnswer(seen: Seen[], accessToken: string): void {
  nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(recorder(seen, () => [200, { access_token: accessToken, expires_in: 3599, scope: 'https://www.googleapis.com/auth/gmail.readonly https://www.googleapis.com/auth/userinfo.email', token_type: 'Bearer' }]));
}

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  gmail.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connect through Google OAuth, bootstrap, first pull: messages as Markdown per thread, the attachment as a file; the expired access token is refreshed first', async (t) => {
  // The access token handed out expires within the refresh margin: the first run refreshes it.
  await connectGoogle(server, token, projectId, 'gmail', { accessToken: 'ya29.gmailFirst', refreshToken: '1//gmailRefresh', expiresIn: 30 });
  t.like(await oauthStatus(), { connected: true, kind: 'oauth', account: GOOGLE_ACCOUNT, needs_reauth: false });

  const missing = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'gmail', config: { path: `/${FOLDER}` } } });
  t.is(missing.status, 422);
  t.regex(JSON.stringify(missing.body), /query/);
  const unknown = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'gmail', config: { path: `/${FOLDER}`, query: 'label:receipts', label: 'x' } } });
  t.is(unknown.status, 422);

  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'gmail', config: { path: `/${FOLDER}`, query: 'label:receipts', attachments: true } } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  const refreshes: Seen[] = [];
  refreshAnswer(refreshes, 'ya29.gmailSecond');
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 4, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, rate_limited_ms: 0, cursor_before: null });
  t.is(run.http_calls, gmail.seen.length, 'every Gmail call counted (the token refresh is not a Gmail call)');
  t.is(refreshes.length, 1);
  t.like(refreshes[0]!.body as object, { grant_type: 'refresh_token', refresh_token: '1//gmailRefresh', client_id: GOOGLE_APP.id, client_secret: GOOGLE_APP.secret });
  t.deepEqual(bearers(), new Set(['Bearer ya29.gmailSecond']), 'only the refreshed token was used');
  t.is(JSON.parse(run.cursor_after).historyId, gmail.currentHistoryId);

  const first = await cat('Your order #1234/2024-05-01 Your order #1234.md');
  t.is(first.status, 200);
  t.like(first.body.data, { type: 'markdown' });
  t.regex(first.body.data.content, /^---\nfrom: "Shop <orders@shop\.example>"/);
  t.regex(first.body.data.content, /labels: \["INBOX", "Receipts"\]/);
  t.regex(first.body.data.content, /---\nThanks for your order\.\n$/);
  t.is((await cat('Your order #1234/2024-05-02 Re: Your order #1234.md')).status, 200);
  const inv = (await cat('Invoice May/2024-05-03 Invoice May.md')).body.data.content as string;
  t.regex(inv, /Your \*\*invoice\*\* is attached\./);
  t.regex(inv, /\[invoice\.pdf\]\(<2024-05-03 Invoice May\/invoice\.pdf>\)/);
  t.like((await cat('Invoice May/2024-05-03 Invoice May/invoice.pdf')).body.data, { type: 'file', size: 16 });
  t.is((await cat('Lunch/2024-05-01 Lunch.md')).status, 404, 'outside the search');
});

test.serial('incremental: a new reply lands in its thread, a message that leaves the search is deleted with its attachment', async (t) => {
  const late = gmail.add({ threadId: order, from: 'Shop <orders@shop.example>', to: 'ada.lovelace@example.com', subject: 'Re: Your order #1234', at: T0 + 4 * DAY, labels: ['INBOX', 'Label_1'], text: 'Shipped.' });
  gmail.unlabel(invoice, 'Label_1');
  gmail.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 1, updated: 0, deleted: 2 }, error: null });
  t.is(gmail.seen[0]!.path, '/gmail/v1/users/me/history');
  t.deepEqual(gmail.seen.filter((s) => /\/messages\/[^/]+$/.test(s.path)).map((s) => s.path.split('/').pop()), [late]);
  t.regex((await cat('Your order #1234/2024-05-05 Re: Your order #1234.md')).body.data.content, /Shipped\./);
  t.is((await cat('Invoice May/2024-05-03 Invoice May.md')).status, 404);
  t.is((await cat('Invoice May/2024-05-03 Invoice May/invoice.pdf')).status, 404);
});

test.serial('an expired history id: a full re-sync without duplicates', async (t) => {
  gmail.remove(reply);
  gmail.expireHistory();
  gmail.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 1 }, error: null });
  t.deepEqual(gmail.seen.slice(0, 2).map((s) => s.path), ['/gmail/v1/users/me/history', '/gmail/v1/users/me/profile']);
  t.is(gmail.seen.filter((s) => /\/messages\/[^/]+$/.test(s.path)).length, 2, 'both matches fetched again');
  t.is((await cat('Your order #1234/2024-05-02 Re: Your order #1234.md')).status, 404);
  // No node was written twice: the sync's folder holds exactly the two messages.
  t.deepEqual(await files(), ['mail/Your order #1234/2024-05-01 Your order #1234.md', 'mail/Your order #1234/2024-05-05 Re: Your order #1234.md']);
});

test.serial('a revoked grant: Gmail answers 401, Google refuses the refresh, the sync pauses for reauthorization; connecting again resumes it', async (t) => {
  gmail.add({ from: 'Shop <orders@shop.example>', to: 'ada.lovelace@example.com', subject: 'Receipt 7', at: T0 + 6 * DAY, labels: ['Label_1'], text: 'Paid.' });
  gmail.interrupts.push({ path: /\/history$/, status: 401, headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' }, body: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }], status: 'UNAUTHENTICATED' } } });
  const refused: Seen[] = [];
  nock(GOOGLE_OAUTH).post('/token').reply(recorder(refused, () => [400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' }]));
  const run = await refresh();
  t.is(run.status, 'failed');
  t.regex(run.error, /gmail.*authorized again/i);
  t.is(refused.length, 1);
  t.like(refused[0]!.body as object, { grant_type: 'refresh_token', refresh_token: '1//gmailRefresh' });
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 409);

  await connectGoogle(server, token, projectId, 'gmail', { accessToken: 'ya29.gmailThird', refreshToken: '1//gmailRefresh2' });
  t.like(await oauthStatus(), { needs_reauth: false });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/resume`, { token })).status, 200);
  gmail.seen.length = 0;
  t.like(await refresh(), { status: 'succeeded', pulled: { created: 1, deleted: 0 } });
  t.deepEqual(bearers(), new Set(['Bearer ya29.gmailThird']));
  t.regex((await cat('Receipt 7/2024-05-07 Receipt 7.md')).body.data.content, /Paid\./);
});
