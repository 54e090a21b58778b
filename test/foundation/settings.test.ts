import test from 'ava';
import { runCli } from '../../src/cli/runCli.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { cleanEnv, memoryIo } from '../helpers/cliIo.ts';

const serve = async (args: string[], env: Record<string, string> = {}) => {
  const m = memoryIo({ env: { ...cleanEnv(), ...env } });
  return { code: await runCli(['serve', ...args], m.io), stderr: m.stderr(), stdout: m.stdoutBytes().toString() };
};

test('a bad setting is named as the user gave it (flag or variable) with what is expected', async (t) => {
  const flag = await serve(['--port', 'x', '--host', '127.0.0.1'], { CNS_LOG_LEVEL: 'loud' });
  t.is(flag.code, 2);
  t.is(
    flag.stderr,
    'cns: Invalid settings: --port must be a whole number from 0 to 65535 (got "x"); ' +
      'CNS_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")\n',
  );
  const variable = await serve(['--host', '127.0.0.1'], { PORT: '70000' });
  t.is(variable.code, 2);
  t.is(variable.stderr, 'cns: Invalid settings: PORT must be a whole number from 0 to 65535 (got "70000")\n');
  const level = await serve(['--log-level', 'chatty']);
  t.regex(level.stderr, /^cns: Invalid settings: --log-level must be one of fatal, /);
  t.is(flag.stdout + variable.stdout, '', 'nothing started');
});

test('each kind of setting says what it expects', (t) => {
  const error = (env: Record<string, string>) => t.throws(() => loadSettings(env)).message;
  t.is(error({ CNS_FSYNC: 'maybe' }), 'Invalid settings: CNS_FSYNC must be true or false (or 1/0, yes/no, on/off) (got "maybe")');
  t.is(error({ CNS_BASE_URL: 'not a url' }), 'Invalid settings: CNS_BASE_URL must be a URL such as https://cns.example.com (got "not a url")');
  t.is(error({ CNS_ADMIN_EMAIL: 'nobody' }), 'Invalid settings: CNS_ADMIN_EMAIL must be an email address (got "nobody")');
  t.is(error({ CNS_ADMIN_PASSWORD: 'short' }), 'Invalid settings: CNS_ADMIN_PASSWORD must have at least 8 characters');
  t.is(error({ CNS_INGEST_WORKERS: '1.5' }), 'Invalid settings: CNS_INGEST_WORKERS must be a whole number from 1 to 64 (got "1.5")');
  t.is(error({ CNS_BODY_LIMIT_BYTES: '12' }), 'Invalid settings: CNS_BODY_LIMIT_BYTES must be a whole number ≥ 1024 (got "12")');
  t.is(error({ CNS_SANDBOX: 'docker' }), 'Invalid settings: CNS_SANDBOX must be one of auto, bwrap, just-bash (got "docker")');
});

test('without CNS_BUS_URL there is no cluster, and a setting of a cluster given alone is refused', (t) => {
  t.is(loadSettings({}).cluster, null);
  t.is(loadSettings({ CNS_DATABASE_URL: 'postgres://cns@db.example/cns' }).cluster, null);
  const error = (env: Record<string, string>) => t.throws(() => loadSettings(env)).message;
  for (const name of ['CNS_NODE_ID', 'CNS_NODE_URL', 'CNS_REPLICAS', 'CNS_CLUSTER_HEARTBEAT_MS', 'CNS_CLUSTER_DOWN_AFTER_MS', 'CNS_REPLICATION_TIMEOUT_MS', 'CNS_CLUSTER_REPLACE_AFTER_S']) {
    const value = { CNS_NODE_ID: 'n1', CNS_NODE_URL: 'http://n1.example', CNS_REPLICAS: '3', CNS_CLUSTER_HEARTBEAT_MS: '1000', CNS_CLUSTER_DOWN_AFTER_MS: '5000', CNS_REPLICATION_TIMEOUT_MS: '2000', CNS_CLUSTER_REPLACE_AFTER_S: '60' }[name]!;
    t.is(error({ [name]: value }), `Invalid settings: ${name} is set without CNS_BUS_URL: it applies to a node of a cluster only`);
  }
});

test('a node of a cluster: its settings, their defaults, and one line naming each refused variable', (t) => {
  const node = { CNS_BUS_URL: 'nats://10.0.0.5:4222, nats://10.0.0.6:4222', CNS_DATABASE_URL: 'postgres://cns@db.example/cns', CNS_NODE_ID: 'node-1', CNS_NODE_URL: 'http://10.0.0.1:8080/' };
  t.deepEqual(loadSettings(node).cluster, { busUrls: ['nats://10.0.0.5:4222', 'nats://10.0.0.6:4222'], nodeId: 'node-1', nodeUrl: 'http://10.0.0.1:8080', replicas: 3, heartbeatMs: 1000, downAfterMs: 5000, replicationTimeoutMs: 5000, replaceAfterMs: 300_000 });
  t.like(loadSettings({ ...node, CNS_REPLICAS: '5', CNS_CLUSTER_HEARTBEAT_MS: '100', CNS_CLUSTER_DOWN_AFTER_MS: '300', CNS_REPLICATION_TIMEOUT_MS: '2000' }).cluster, { replicas: 5, heartbeatMs: 100, downAfterMs: 300, replicationTimeoutMs: 2000 });
  t.is(loadSettings({ ...node, CNS_CLUSTER_HEARTBEAT_MS: '2000' }).cluster?.downAfterMs, 6000, 'a slower heartbeat raises the default down-after to 3 beats');

  const error = (env: Record<string, string | undefined>) => t.throws(() => loadSettings(env as Record<string, string>)).message;
  t.is(error({ CNS_BUS_URL: 'nats://10.0.0.5:4222' }),
    'Invalid settings: CNS_DATABASE_URL must be set with CNS_BUS_URL: a cluster keeps its metadata and placement in PostgreSQL; ' +
      "CNS_NODE_ID must be set with CNS_BUS_URL: this node's name in the cluster, such as node-1; " +
      'CNS_NODE_URL must be set with CNS_BUS_URL: the address other nodes reach this one at, such as http://10.0.0.1:8080');
  t.is(error({ ...node, CNS_DATABASE_URL: undefined }), 'Invalid settings: CNS_DATABASE_URL must be set with CNS_BUS_URL: a cluster keeps its metadata and placement in PostgreSQL');
  // The bus addresses may carry credentials: never repeated.
  t.is(error({ ...node, CNS_BUS_URL: 'nats://u:secret@a:4222,http://b' }), 'Invalid settings: CNS_BUS_URL must be a comma-separated list of nats://host:port');
  t.is(error({ ...node, CNS_BUS_URL: 'nats://a:4222,' }), 'Invalid settings: CNS_BUS_URL must be a comma-separated list of nats://host:port');
  t.is(error({ ...node, CNS_NODE_ID: 'Node_1' }), 'Invalid settings: CNS_NODE_ID must be 1 to 32 characters of a-z, 0-9 and - (got "Node_1")');
  t.is(error({ ...node, CNS_NODE_ID: 'n'.repeat(33) }), `Invalid settings: CNS_NODE_ID must be 1 to 32 characters of a-z, 0-9 and - (got "${'n'.repeat(33)}")`);
  for (const bad of ['http://10.0.0.1:8080/cns', 'ftp://10.0.0.1', 'http://10.0.0.1/?x=1', 'not a url']) {
    t.is(error({ ...node, CNS_NODE_URL: bad }), `Invalid settings: CNS_NODE_URL must be http(s)://host[:port] without a path, the address other nodes reach this one at (got ${JSON.stringify(bad)})`);
  }
  t.is(error({ ...node, CNS_REPLICAS: '8' }), 'Invalid settings: CNS_REPLICAS must be a whole number from 1 to 7 (got "8")');
  t.is(error({ ...node, CNS_REPLICAS: '0' }), 'Invalid settings: CNS_REPLICAS must be a whole number from 1 to 7 (got "0")');
  t.is(error({ ...node, CNS_CLUSTER_HEARTBEAT_MS: '50' }), 'Invalid settings: CNS_CLUSTER_HEARTBEAT_MS must be a whole number from 100 to 10000 (got "50")');
  t.is(error({ ...node, CNS_CLUSTER_HEARTBEAT_MS: '1000', CNS_CLUSTER_DOWN_AFTER_MS: '2999' }), 'Invalid settings: CNS_CLUSTER_DOWN_AFTER_MS must be at least 3 × CNS_CLUSTER_HEARTBEAT_MS, 3000 (got "2999")');
  t.is(error({ ...node, CNS_CLUSTER_DOWN_AFTER_MS: '100' }), 'Invalid settings: CNS_CLUSTER_DOWN_AFTER_MS must be a whole number from 300 to 3600000 (got "100")');
});
