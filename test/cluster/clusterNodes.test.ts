import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';

// Servers that are nodes of one cluster (CNS_BUS_URL) on one PostgreSQL database: each joins at
// start, the cluster lists them, a node with another signing key does not start, and a clean
// stop marks its node down. A fast heartbeat (100 ms), and a down-after that two servers starting
// in one test process keep to.

const migrated = migratedDatabases(test.after.always);
// A NATS server of this file's own (the machine's shared one is left alone): the nodes' change bus.
let nats: NatsCluster | null = null;
test.before(async () => {
  nats = await startNatsCluster(1);
});
test.after.always(() => nats?.stop());
const folders: string[] = [];
test.after.always(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

function nodeEnv(databaseUrl: string, id: string): Record<string, string> {
  return {
    CNS_DATABASE_URL: databaseUrl,
    CNS_DATABASE_POOL: '4',
    CNS_BUS_URL: nats!.urls[0]!,
    CNS_NODE_ID: id,
    CNS_NODE_URL: `http://${id}.test:8080`,
    CNS_CLUSTER_HEARTBEAT_MS: '100',
    CNS_CLUSTER_DOWN_AFTER_MS: '3000',
  };
}

/** A data folder holding the given node's signing.key, as the operator copies it. */
function folderWithKeyOf(server: TestServer): string {
  const dir = mkdtempSync(join(tmpdir(), 'cns-node-'));
  folders.push(dir);
  copyFileSync(join(server.dataDir, 'signing.key'), join(dir, 'signing.key'));
  return dir;
}

test('two nodes join at start and are listed; a node with another key is refused; a clean stop marks the node down', async (t) => {
  const d = await migrated();
  const a = await startTestServer({}, nodeEnv(d.url, 'node-a'));
  t.teardown(() => a.stop());
  const b = await startTestServer({ dataDir: folderWithKeyOf(a) }, nodeEnv(d.url, 'node-b'));
  let bStopped = false;
  t.teardown(() => (bStopped ? undefined : b.stop()));

  const admin = await a.login();
  const res = await a.api('GET', '/cluster', { token: admin.token });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.data.node, 'node-a');
  t.true(res.body.data.cluster);
  t.deepEqual(
    res.body.data.nodes.map((n: { id: string; url: string; state: string }) => [n.id, n.url, n.state]),
    [
      ['node-a', 'http://node-a.test:8080', 'up'],
      ['node-b', 'http://node-b.test:8080', 'up'],
    ],
  );
  t.is((await b.api('GET', '/healthz')).body.data.node, 'node-b');
  // The admin's token, signed on node a, is good on node b: the two share one signing key.
  t.is((await b.api('GET', '/cluster', { token: admin.token })).body.data.node, 'node-b');

  const stranger = await t.throwsAsync(startTestServer({}, nodeEnv(d.url, 'node-c')));
  t.is(stranger?.message, "this node's signing.key differs from the cluster's: copy the first node's data-folder signing.key to every node");

  await b.stop();
  bStopped = true;
  const after = await a.api('GET', '/cluster', { token: admin.token });
  t.deepEqual(
    after.body.data.nodes.map((n: { id: string; state: string }) => [n.id, n.state]),
    [
      ['node-a', 'up'],
      ['node-b', 'down'],
    ],
  );
});
