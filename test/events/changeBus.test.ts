import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeBus, type BusMessage, type BusTransport } from '../../src/events/changeBus.ts';
import { commitEventOf, type CommitEvent } from '../../src/events/commitEvent.ts';
import { alice, fixture } from '../content/helpers.ts';

const P = 'proj';
const event = (seq: number, project = P): CommitEvent => ({ project, commit: `c${seq}`, seq, at: new Date(0).toISOString() });

test('subscribers get every event in publish order; one that throws does not stop the others or the publisher', (t) => {
  const bus = new ChangeBus();
  const seen: string[] = [];
  bus.subscribe('first', (e) => seen.push(`first ${e.seq}`));
  bus.subscribe('failing', () => {
    throw new Error('broken subscriber');
  });
  bus.subscribe('last', (e) => seen.push(`last ${e.seq}`));
  bus.publish(event(1));
  bus.publish(event(2));
  t.deepEqual(seen, ['first 1', 'last 1', 'first 2', 'last 2']);
  t.deepEqual(bus.names(), ['first', 'failing', 'last']);
});

test('a name subscribes once; unsubscribing stops delivery', (t) => {
  const bus = new ChangeBus();
  const seen: number[] = [];
  const off = bus.subscribe('feed', (e) => seen.push(e.seq));
  t.throws(() => bus.subscribe('feed', () => {}), { message: /"feed" is already subscribed/ });
  bus.publish(event(1));
  off();
  bus.publish(event(2));
  t.deepEqual(seen, [1]);
});

test('a transport carries published events out and delivers events from elsewhere to the subscribers here', async (t) => {
  const sent: BusMessage[] = [];
  let receive: ((m: BusMessage) => void) | null = null;
  let closed = false;
  const transport: BusTransport = {
    send: (m) => sent.push(m),
    start: (r) => void (receive = r),
    close: async () => void (closed = true),
  };
  const bus = new ChangeBus();
  const seen: string[] = [];
  const ownerOnly: string[] = [];
  const signals: string[] = [];
  bus.subscribe('feed', (e) => seen.push(`${e.project}@${e.seq}`));
  bus.subscribe('indexer', (e) => ownerOnly.push(`${e.project}@${e.seq}`), { local: true });
  bus.onSignal('caches', (s) => signals.push(`${s.kind}:${s.project}`));
  await bus.connect(transport);
  bus.publish(event(1));
  receive!(JSON.parse(JSON.stringify({ commit: event(7, 'other') })) as BusMessage);
  receive!({ signal: { kind: 'project-deleted', project: 'gone' } });
  bus.signal({ kind: 'access-changed', project: P });
  t.deepEqual(seen, [`${P}@1`, 'other@7'], 'local publishes and remote events reach the same subscribers');
  t.deepEqual(ownerOnly, [`${P}@1`], "a local subscriber hears only this process's commits");
  t.deepEqual(signals, ['project-deleted:gone', `access-changed:${P}`], 'signals from elsewhere and from here both arrive');
  t.deepEqual(sent, [{ commit: event(1) }, { signal: { kind: 'access-changed', project: P } }], 'only what was published here is sent: nothing received is echoed back');
  await bus.close();
  t.true(closed);
});

test("the content store's commits become events naming the new tip and its commit number, writes and indexed pushes alike", async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const bus = new ChangeBus();
  f.store.onCommitted((tip) => bus.publish(commitEventOf(tip)));
  const events: CommitEvent[] = [];
  bus.subscribe('test', (e) => events.push(e));

  const first = await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'one' });
  const second = await f.store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'two' });
  t.deepEqual(
    events.map((e) => [e.project, e.commit, e.seq]),
    [
      [P, first.commitId, first.projectVersion],
      [P, second.commitId, second.projectVersion],
    ],
  );

  // A commit made with git straight into the repository, as a push would: the event follows its indexing.
  const work = mkdtempSync(join(tmpdir(), 'cns-bus-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'P', GIT_AUTHOR_EMAIL: 'p@example.com', GIT_COMMITTER_NAME: 'P', GIT_COMMITTER_EMAIL: 'p@example.com' };
  execFileSync('git', ['clone', '-q', join(f.dir, `${P}.git`), 'c'], { cwd: work, env });
  const c = join(work, 'c');
  writeFileSync(join(c, 'c.md'), 'three');
  execFileSync('git', ['add', '.'], { cwd: c, env });
  execFileSync('git', ['commit', '-qm', 'pushed'], { cwd: c, env });
  execFileSync('git', ['push', '-q', 'origin', 'HEAD:main'], { cwd: c, env });
  const pushed = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: c }).toString().trim();
  await f.store.reconcile(P);
  t.deepEqual(events.map((e) => e.seq), [first.projectVersion, second.projectVersion, second.projectVersion! + 1]);
  t.is(events[2]!.commit, pushed);
});
