import test from 'ava';
import { jetstream, type JetStreamManager, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import type { BusMessage } from '../../src/events/changeBus.ts';
import { type NatsBusOptions, type NatsBusTransport, openNatsBus } from '../../src/events/natsBus.ts';
import { type NatsCluster, startNatsCluster, startPlainNatsServer } from '../helpers/natsCluster.ts';

// One 3-server JetStream cluster of the file's own, shared by its tests (serial: some kill
// servers). Streams cannot share subjects, so the tests share one stream, and each test has
// projects of its own and looks only at them.

const STREAM = 'CNS_EVENTS_TEST';
let cluster: NatsCluster;
const opened: NatsBusTransport[] = [];

test.before(async () => {
  cluster = await startNatsCluster(3);
});
test.after.always(async () => {
  await Promise.all(opened.map((b) => b.close()));
  await cluster?.stop();
});

interface Node {
  bus: NatsBusTransport;
  received: BusMessage[];
  resets: number;
  warnings: string[];
}

/** A transport on the cluster, started, recording what it receives of `projects`, its resets and its warnings. */
async function node(origin: string, projects: string[], options: Partial<NatsBusOptions> = {}): Promise<Node> {
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  const n: Partial<Node> = { received: [], resets: 0, warnings };
  const bus = await openNatsBus({ servers: cluster.urls, origin, stream: STREAM, logger, connectTimeoutMs: 20_000, onReset: () => void n.resets!++, ...options });
  opened.push(bus);
  await bus.start((m) => {
    if (projects.includes('commit' in m ? m.commit.project : m.signal.project)) n.received!.push(m);
  });
  n.bus = bus;
  return n as Node;
}

let projects = 0;
/** A project id of the real shape: `prj_` and 16+ of [0-9a-z]. */
const project = () => `prj_${process.pid.toString(36)}${String(++projects).padStart(16, '0')}`;
const commit = (p: string, seq: number): BusMessage => ({ commit: { project: p, commit: `${seq}`.padStart(40, 'c'), seq, at: new Date().toISOString() } });
const label = (m: BusMessage) => ('commit' in m ? `commit ${m.commit.project} ${m.commit.seq}` : `${m.signal.kind} ${m.signal.project}`);
const labels = (ms: BusMessage[]) => ms.map(label);

/** Polls `check` until it holds or `withinMs` passes (then fails with `what`). */
async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `use` on a JetStream manager of a connection of its own. */
async function withManager<T>(use: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: cluster.urls });
  try {
    return await use(await jetstreamManager(nc, { timeout: 2_000 }));
  } finally {
    await nc.close();
  }
}

/** Waits until the stream has a leader and both other replicas are current (a restarted server has caught up). */
async function streamHealthy(): Promise<void> {
  // Each look with a connection of its own: just after a restart, on a loaded machine, JetStream's
  // API may not answer within a request's time (a TimeoutError is one more look, not a failure).
  const healthy = () =>
    withManager(async (jsm) => {
      const info = await jsm.streams.info(STREAM);
      const replicas = info.cluster?.replicas ?? [];
      return Boolean(info.cluster?.leader) && replicas.length === 2 && replicas.every((r) => r.current && !r.offline);
    }).catch(() => false);
  await until('the stream to be whole again', healthy, 30_000);
}

/** The index in `cluster.urls` of the server a transport is connected to now. */
function serverOf(bus: NatsBusTransport): number {
  const server = bus.state().server;
  const i = cluster.urls.findIndex((u) => server !== null && u.endsWith(`:${server.split(':').pop()}`));
  if (i < 0) throw new Error(`not connected to a server of the cluster: ${server}`);
  return i;
}

test.serial('commits and signals reach the other transport once each, in send order, and never come back to the sender', async (t) => {
  const [p, q] = [project(), project()];
  const [a, b] = [await node('n1', [p, q]), await node('n2', [p, q])];
  const fromA: BusMessage[] = [commit(p, 1), { signal: { kind: 'publish-changed', project: p } }, commit(p, 2), commit(q, 1), { signal: { kind: 'project-deleted', project: q } }, commit(p, 3)];
  for (const m of fromA) a.bus.send(m);
  const endA = fromA.at(-1)!;
  await until('b to receive what a sent', () => b.received.some((m) => label(m) === label(endA)));
  // What a sent is in the stream before anything b sends now: an echo to a would arrive first.
  const fromB: BusMessage[] = [commit(q, 2), { signal: { kind: 'access-changed', project: q } }];
  for (const m of fromB) b.bus.send(m);
  await until('a to receive what b sent', () => a.received.length >= fromB.length);
  // A last message from a: had any message arrived twice, b would hold it before this one.
  const last = commit(p, 4);
  a.bus.send(last);
  await until('b to receive the last message', () => b.received.length >= fromA.length + 1);
  t.deepEqual(b.received, [...fromA, last]);
  t.deepEqual(a.received, fromB);
  t.deepEqual(a.bus.state(), { connected: true, backlog: 0, dropped: 0, servers: cluster.urls, server: a.bus.state().server });
  const { config } = await withManager((jsm) => jsm.streams.info(STREAM));
  t.like(config, { num_replicas: 3, storage: StorageType.File, max_age: 7 * 24 * 3600 * 1e9, duplicate_window: 120 * 1e9, subjects: ['cns.commit.*', 'cns.signal.*.*'] });
  // Closing twice is closing once; a send after it is dropped, not thrown.
  await Promise.all([a.bus.close(), a.bus.close()]);
  t.notThrows(() => a.bus.send(commit(p, 5)));
  t.like(a.bus.state(), { connected: false, backlog: 0, server: null });
});

test.serial('the same commit sent by two transports arrives once (JetStream drops the repeated message id)', async (t) => {
  const p = project();
  const [a, b, observer] = [await node('n1', [p]), await node('n2', [p]), await node('n3', [p])];
  a.bus.send(commit(p, 7));
  b.bus.send(commit(p, 7));
  await until('both publishes to be acknowledged', () => a.bus.state().backlog === 0 && b.bus.state().backlog === 0);
  a.bus.send(commit(p, 8));
  await until('the observer to receive the later commit', () => observer.received.some((m) => label(m) === `commit ${p} 8`));
  t.deepEqual(labels(observer.received), [`commit ${p} 7`, `commit ${p} 8`]);
  // Whichever was stored, only the other of the two hears it.
  await until('b to receive the later commit', () => b.received.some((m) => label(m) === `commit ${p} 8`));
  t.is([...a.received, ...b.received].filter((m) => label(m) === `commit ${p} 7`).length, 1);
});

test.serial('a malformed message on the stream is logged and skipped; the next one is delivered', async (t) => {
  const p = project();
  const b = await node('n2', [p]);
  const nc = await connect({ servers: cluster.urls });
  try {
    const js = jetstream(nc);
    await js.publish(`cns.commit.${p}`, 'not json');
    await js.publish(`cns.commit.${p}`, JSON.stringify({ origin: 'n9', commit: { project: p } }));
    await js.publish(`cns.commit.${p}`, JSON.stringify({ origin: 'n9', commit: { project: p, commit: 'c1', seq: 1, at: 'now' } }));
    await until('the valid message', () => b.received.length > 0);
    t.deepEqual(b.received, [{ commit: { project: p, commit: 'c1', seq: 1, at: 'now' } }]);
    t.is(b.warnings.filter((w) => w === 'nats bus: a malformed message was skipped').length, 2);
  } finally {
    await nc.close();
  }
});

test.serial('kill -9 of the NATS server a transport is connected to: what it sends afterwards still arrives', async (t) => {
  const p = project();
  const [a, b] = [await node('n1', [p]), await node('n2', [p])];
  a.bus.send(commit(p, 1));
  await until('the first commit', () => b.received.length === 1);
  const victim = serverOf(a.bus);
  await cluster.kill(victim);
  const started = Date.now();
  for (let seq = 2; seq <= 6; seq++) a.bus.send(commit(p, seq));
  // The stream's leader may have died with the server: a new one is elected first, which on a
  // loaded CI machine (load 17) has taken over 20 s; on a quiet one, under a second.
  await until('the commits sent after the kill', () => b.received.length === 6, 60_000);
  t.log(`delivered ${Date.now() - started} ms after the kill of server ${victim}`);
  t.deepEqual(labels(b.received), [1, 2, 3, 4, 5, 6].map((seq) => `commit ${p} ${seq}`));
  t.not(serverOf(a.bus), victim);
  await cluster.restart(victim);
  await streamHealthy();
});

test.serial('all NATS servers down: sends wait (the oldest dropped past maxBacklog) and arrive in order once they are back', async (t) => {
  const [p, q] = [project(), project()];
  const [a, b, small] = [await node('n1', [p, q]), await node('n2', [p, q]), await node('n3', [p, q], { maxBacklog: 3 })];
  a.bus.send(commit(p, 1));
  await until('the commit before the outage', () => b.received.length === 1);
  await Promise.all([0, 1, 2].map((i) => cluster.kill(i)));
  await until('every transport to see the outage', () => [a, b, small].every((n) => !n.bus.state().connected));
  const waiting: BusMessage[] = [];
  for (let seq = 2; seq <= 9; seq++) waiting.push(commit(p, seq));
  waiting.push({ signal: { kind: 'project-reset', project: p } });
  for (const m of waiting) t.notThrows(() => a.bus.send(m));
  for (let seq = 1; seq <= 8; seq++) small.bus.send(commit(q, seq));
  t.like(a.bus.state(), { connected: false, backlog: waiting.length, dropped: 0 });
  t.like(small.bus.state(), { connected: false, backlog: 3, dropped: 5 });
  t.is(small.warnings.filter((w) => w.startsWith('nats bus: the backlog is full')).length, 1, 'one warning for the episode');

  await Promise.all([0, 1, 2].map((i) => cluster.restart(i)));
  const expected = [`commit ${p} 1`, ...labels(waiting), ...[6, 7, 8].map((seq) => `commit ${q} ${seq}`)];
  await until('every waiting message', () => b.received.length >= expected.length, 25_000);
  t.deepEqual(labels(b.received.filter((m) => label(m).includes(p))), expected.filter((l) => l.includes(p)));
  t.deepEqual(labels(b.received.filter((m) => label(m).includes(q))), expected.filter((l) => l.includes(q)));
  t.is(b.received.length, expected.length);
  t.like(a.bus.state(), { connected: true, backlog: 0, dropped: 0 });
  t.like(small.bus.state(), { connected: true, backlog: 0, dropped: 5 });
  t.true(b.resets > 0, 'the consumer, lost with the servers, was recreated and reported');
});

test.serial('an unreachable URL and a server without JetStream each fail in one line that names CNS_BUS_URL, leaving no handle open', async (t) => {
  const handles = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'Timeout').length;
  const before = handles();
  let started = Date.now();
  const unreachable = await t.throwsAsync(openNatsBus({ servers: ['nats://127.0.0.1:1'], origin: 'n1', connectTimeoutMs: 1_000 }));
  t.true(Date.now() - started < 1_500, `failed after ${Date.now() - started} ms`);
  t.regex(unreachable!.message, /^CNS_BUS_URL: cannot reach NATS at nats:\/\/127\.0\.0\.1:1 within 1 s \([^\n]+\)$/);

  const plain = await startPlainNatsServer();
  try {
    started = Date.now();
    const noJetStream = await t.throwsAsync(openNatsBus({ servers: [plain.url], origin: 'n1', connectTimeoutMs: 3_000 }));
    t.true(Date.now() - started < 3_500, `failed after ${Date.now() - started} ms`);
    t.is(noJetStream!.message, 'CNS_BUS_URL: the NATS server has no JetStream (start it with -js)');
  } finally {
    await plain.stop();
  }
  await until('the failed connections to release their sockets and timers', () => handles() <= before, 2_000);
  t.pass();
});
