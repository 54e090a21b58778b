import test from 'ava';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import nock from 'nock';
import { WebhookDeliveries } from '../../../src/platform/runtime/webhookDeliveries.ts';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, isolateNetwork, startOAuthServer, type OAuthTestServer } from '../oauth/helpers.ts';
import { fakeConnector, FakeSource } from './fakeSource.ts';
import { metadataCount } from '../../helpers/metadata.ts';
import { sql } from 'kysely';

// Replayed GitHub webhook deliveries (issue 28 point 2): a delivery already accepted, by its id
// or by its body and signature, starts no run; what is remembered is bounded by count and age.

const REMEMBER = 3;
let server: OAuthTestServer;
let token: string;
let projectId: string;

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({ CNS_SYNC_WEBHOOK_REMEMBER: String(REMEMBER) });
  server.running.services.syncRuntime.register(fakeConnector);
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' }, { 'X-OAuth-Scopes': 'repo' });
  const connected = await server.api('POST', '/oauth/github/token', { token, body: { project_id: projectId, token: 'ghp_replayTestToken01' } });
  if (connected.status >= 300) throw new Error(JSON.stringify(connected.body));
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

/** A github sync in webhook mode: its id and its secret. */
async function webhookSync(path: string): Promise<{ syncId: string; secret: string }> {
  const res = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path } } });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  const syncId = res.body.data.sync.id as string;
  const hook = await server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body: { mode: 'webhook' } });
  return { syncId, secret: hook.body.data.webhook_secret as string };
}

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

interface Delivery {
  status: number;
  body: { data: { duplicate: boolean; run: { id: string; status: string } | null }; message: string };
}

function deliver(syncId: string, body: string, headers: Record<string, string>): Promise<Delivery> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.running.url}/api/v1/sync/webhooks/${syncId}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const webhookRuns = async (syncId: string) =>
  ((await server.api('GET', `/sync/syncs/${syncId}/runs?limit=100`, { token })).body.data.runs as { id: string; trigger: string; status: string }[]).filter(
    (r) => r.trigger === 'webhook',
  );

/** Polls until every webhook run of the sync has finished (a new delivery then starts a new run rather than joining one). */
async function settled(syncId: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await webhookRuns(syncId)).some((r) => r.status === 'queued' || r.status === 'running')) {
    if (Date.now() > deadline) throw new Error('runs still going');
    await new Promise((r) => setTimeout(r, 25));
  }
}

test.serial('the same delivery id twice: the second is a duplicate and starts no run', async (t) => {
  new FakeSource().intercept();
  const { syncId, secret } = await webhookSync('/hook-id');
  const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a1' });
  const first = await deliver(syncId, body, { 'x-hub-signature-256': sign(secret, body), 'x-github-delivery': 'd-1' });
  t.is(first.status, 202, JSON.stringify(first.body));
  t.false(first.body.data.duplicate);
  await settled(syncId);

  // GitHub's "Redeliver" sends the same id; a replayer may change the body but not the signature's secret.
  const again = await deliver(syncId, body, { 'x-hub-signature-256': sign(secret, body), 'x-github-delivery': 'd-1' });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.true(again.body.data.duplicate);
  t.regex(again.body.message, /duplicate/i);
  t.is(again.body.data.run?.id, first.body.data.run!.id);
  const otherBody = JSON.stringify({ ref: 'refs/heads/main', after: 'a2' });
  const sameIdOtherBody = await deliver(syncId, otherBody, { 'x-hub-signature-256': sign(secret, otherBody), 'x-github-delivery': 'd-1' });
  t.true(sameIdOtherBody.body.data.duplicate);
  t.is((await webhookRuns(syncId)).length, 1);
  assertDocumented(t, server.running.services, 'post', '/sync/webhooks/{syncId}', { status: again.status, body: again.body as never });
  assertDocumented(t, server.running.services, 'post', '/sync/webhooks/{syncId}', { status: first.status, body: first.body as never });
});

test.serial('a new delivery id with the same body and signature is a duplicate; a new body starts a run', async (t) => {
  new FakeSource().intercept();
  const { syncId, secret } = await webhookSync('/hook-digest');
  const body = JSON.stringify({ ref: 'refs/heads/main', after: 'b1' });
  const signature = sign(secret, body);
  const first = await deliver(syncId, body, { 'x-hub-signature-256': signature, 'x-github-delivery': 'e-1' });
  t.is(first.status, 202);
  await settled(syncId);
  const replay = await deliver(syncId, body, { 'x-hub-signature-256': signature, 'x-github-delivery': 'e-forged' });
  t.is(replay.status, 200);
  t.true(replay.body.data.duplicate);
  // Without any delivery id, too.
  t.true((await deliver(syncId, body, { 'x-hub-signature-256': signature })).body.data.duplicate);
  t.is((await webhookRuns(syncId)).length, 1);

  const next = JSON.stringify({ ref: 'refs/heads/main', after: 'b2' });
  const fresh = await deliver(syncId, next, { 'x-hub-signature-256': sign(secret, next), 'x-github-delivery': 'e-2' });
  t.is(fresh.status, 202);
  t.false(fresh.body.data.duplicate);
  await settled(syncId);
  t.is((await webhookRuns(syncId)).length, 2);
  // An unsigned replay is still refused before anything is remembered.
  t.is((await deliver(syncId, next, { 'x-github-delivery': 'e-3' })).status, 401);
  t.is((await deliver(syncId, next, { 'x-hub-signature-256': sign(secret, next), 'x-github-delivery': 'x'.repeat(201) })).status, 422);
});

test.serial('what is remembered is bounded: the newest deliveries per sync only', async (t) => {
  new FakeSource().intercept();
  const { syncId, secret } = await webhookSync('/hook-bound');
  const post = (n: number) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: `c${n}` });
    return deliver(syncId, body, { 'x-hub-signature-256': sign(secret, body), 'x-github-delivery': `f-${n}` });
  };
  for (let n = 1; n <= REMEMBER + 2; n++) {
    t.false((await post(n)).body.data.duplicate);
    await settled(syncId);
  }
  const rows = await server.running.services.metadata.db.selectFrom('sync_webhook_deliveries').select('delivery_id').where('sync_id', '=', syncId).orderBy('received_at').orderBy('seq').execute();
  t.deepEqual(
    rows.map((r) => r.delivery_id),
    ['f-3', 'f-4', 'f-5'],
  );
  // The newest are still duplicates; the oldest was forgotten.
  t.true((await post(5)).body.data.duplicate);
  t.false((await post(1)).body.data.duplicate);
  await settled(syncId);
  // Deleting the sync forgets its deliveries.
  await server.api('DELETE', `/sync/syncs/${syncId}`, { token });
  t.is(await metadataCount(server.running, sql`SELECT COUNT(*) AS n FROM sync_webhook_deliveries WHERE sync_id = ${syncId}`), 0);
});

test.serial('deliveries older than the age bound are forgotten (the store, on the real database, with a driven clock)', async (t) => {
  const { syncId } = await webhookSync('/hook-age');
  let clock = 1_000_000;
  const deliveries = new WebhookDeliveries(server.running.services.metadata, () => ({ maxPerSync: 100, maxAgeMs: 60_000 }), () => clock);
  const digest = WebhookDeliveries.digest(Buffer.from('{}'), 'sha256=00');
  t.false((await deliveries.claim(syncId, 'g-1', digest)).duplicate);
  clock += 59_000;
  t.true((await deliveries.claim(syncId, 'g-1', digest)).duplicate);
  t.true((await deliveries.claim(syncId, null, digest)).duplicate);
  clock += 2_000;
  // Past the age bound: forgotten, so accepted again (and remembered from now).
  t.false((await deliveries.claim(syncId, 'g-1', digest)).duplicate);
  t.is(await deliveries.count(syncId), 1);
  t.true((await deliveries.claim(syncId, 'g-2', digest)).duplicate);
});
