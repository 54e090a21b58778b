import test from 'ava';
import { createHmac } from 'node:crypto';
import { CliUser } from '../cli/harness.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Receiver } from './receiver.ts';

// `cns webhooks list|create|delete|deliveries|redeliver|ping` against a real server and receiver.

let server: TestServer;
let u: CliUser;
let r: Receiver;
test.before(async () => {
  server = await startTestServer({ urlFetchAllowPrivate: true });
  u = new CliUser();
  await u.login(server);
  // A first command initializes the default project.
  await u.run(['projects', '--json']);
  r = await new Receiver().start();
});
test.after.always(async () => {
  u?.dispose();
  await r?.stop();
  await server?.stop();
});

test.serial('create, list, ping, deliveries, redeliver and delete from the command line', async (t) => {
  const empty = await u.run(['webhooks']);
  t.is(empty.code, 0, empty.stderr);
  t.regex(empty.stdout, /No webhooks/);
  const created = await u.run(['webhooks', 'create', r.url, '--events', 'content.created,content.updated', '--path', 'notes', '--json']);
  t.is(created.code, 0, created.stderr);
  const hook = created.json;
  t.deepEqual(hook.events, ['content.created', 'content.updated']);
  t.is(hook.path_prefix, 'notes');
  const human = await u.run(['webhooks', 'create', r.url]);
  t.regex(human.stdout, /^Created webhook whk_\w+ → http:\/\/127\.0\.0\.1:\d+\/hook \(content\.created, .*; path \/\)\nSecret: \S{32,}\nThe secret is shown only this once/);
  const humanId = /Created webhook (whk_\w+)/.exec(human.stdout)![1]!;

  const list = await u.run(['webhooks', 'list']);
  t.regex(list.stdout, /ID\s+URL\s+EVENTS\s+PATH\s+STATE\s+PENDING/);
  t.regex(list.stdout, new RegExp(`${hook.id}\\s+\\S+\\s+content\\.created,content\\.updated\\s+/notes\\s+active\\s+0`));

  const ping = await u.run(['webhooks', 'ping', hook.id]);
  t.regex(ping.stdout, /^Ping delivered: 200 in \d+ ms \(dlv_\w+\)\n$/);
  t.is(r.of('ping').at(-1)!.headers['x-cns-signature-256'], `sha256=${createHmac('sha256', hook.secret).update(r.of('ping').at(-1)!.raw).digest('hex')}`);

  t.is((await u.run(['write', 'notes/a.md'], { input: 'hello' })).code, 0);
  await r.waitFor(() => r.of('content.created').length >= 2, 15_000, 'both hooks');
  let rows: { id: string; event: string; status: string }[] = [];
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    rows = (await u.run(['webhooks', 'deliveries', hook.id, '--json'])).json.deliveries;
    if (rows.some((d) => d.event === 'content.created' && d.status === 'delivered')) break;
  }
  const delivered = rows.find((d) => d.event === 'content.created' && d.status === 'delivered')!;
  t.truthy(delivered);
  const table = await u.run(['webhooks', 'deliveries', hook.id]);
  t.regex(table.stdout, new RegExp(`${delivered.id}\\s+content\\.created\\s+delivered\\s+1\\s+200`));

  const before = r.received.length;
  const re = await u.run(['webhooks', 'redeliver', hook.id, delivered.id]);
  t.regex(re.stdout, new RegExp(`^Queued redelivery dlv_\\w+ of ${delivered.id}\\n$`));
  await r.waitFor(() => r.received.length > before);
  t.is(r.received.at(-1)!.body.redelivery_of, delivered.id);

  const bad = await u.run(['webhooks', 'create', r.url, '--events', 'content.exploded']);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /content\.created/);
  const missing = await u.run(['webhooks', 'ping', 'whk_nope']);
  t.not(missing.code, 0);
  t.regex(missing.stderr, /Webhook not found/);

  t.regex((await u.run(['webhooks', 'delete', humanId])).stdout, new RegExp(`^Deleted webhook ${humanId}\\n$`));
  t.regex((await u.run(['webhooks', 'rm', hook.id])).stdout, new RegExp(`^Deleted webhook ${hook.id}\\n$`));
  t.regex((await u.run(['webhooks'])).stdout, /No webhooks/);
});
