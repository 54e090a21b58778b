import test, { type ExecutionContext } from 'ava';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alice, fixture, until } from '../content/helpers.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { ContentAccess, type ContentGrant } from '../../src/policies/contentAccess.ts';
import { SandboxExecutor, type ExecRequest } from '../../src/sandbox/executor.ts';
import { ChangeBus } from '../../src/events/changeBus.ts';
import { commitEventOf } from '../../src/events/commitEvent.ts';
import { DEFAULT_LIMITS } from '../../src/sandbox/limits.ts';
import { BwrapRuntime } from '../../src/sandbox/runtime/bwrapRuntime.ts';
import { WorkspacePool } from '../../src/sandbox/workspace/workspacePool.ts';
import { P, seedProject } from './workspaceHelpers.ts';
import { leavesNoHostMounts, usesSandboxRoot } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

// The executor's warm sandboxes without HTTP: expiry, the bound on their number, close.

interface Setup {
  executor: SandboxExecutor;
  runtime: BwrapRuntime;
  pool: WorkspacePool;
  root: string;
  exec(scope: string, command: string): ReturnType<SandboxExecutor['exec']>;
}

async function setup(t: ExecutionContext, warm: { idleMs?: number; max?: number; delayMs?: number }): Promise<Setup> {
  const f = fixture();
  await seedProject(f.store);
  // The sandbox uid must reach the workspaces: a 0711 root of its own (temp folders are 0700).
  const root = await mkdtemp(join(tmpdir(), 'cns-warm-exec-'));
  await chmod(root, 0o711);
  usesSandboxRoot(join(root, 'ws'));
  const pool = new WorkspacePool({ root: join(root, 'ws'), content: f.store });
  let runtime: BwrapRuntime | null = null;
  // The store's commits reach the executor over the change bus, as the composition root wires them.
  const bus = new ChangeBus();
  f.store.onCommitted((tip) => bus.publish(commitEventOf(tip)));
  const executor = new SandboxExecutor({
    content: f.store,
    bus,
    access: new ContentAccess({ requireProject: () => ({ role: 'admin', scope: '' }) }),
    // The caller stays as it was: write-time checks are the endpoints' tests' business.
    writeTimeGrants: { require: async () => grant },
    selectRuntime: async () => (runtime = await BwrapRuntime.create()),
    pool,
    logger: createLogger('silent'),
    maxConcurrent: 4,
    maxQueued: 16,
    warm,
  });
  t.teardown(async () => {
    await executor.close();
    await f.cleanup();
    await rm(root, { recursive: true, force: true });
  });
  await executor.start();
  const principal = { kind: 'user', id: alice.id, user: { id: alice.id, email: alice.author } } as unknown as Principal;
  const grant: ContentGrant = { principal, projectId: P, role: 'admin', scope: '', action: 'content:write', actor: alice };
  const exec = (scope: string, command: string) => {
    const req: ExecRequest = { grant, scope, mode: 'read_write', command, timeoutS: 10, limits: DEFAULT_LIMITS };
    return executor.exec(req);
  };
  return { executor, runtime: runtime!, pool, root, exec };
}

/** Processes whose command line names `text` (bwrap binds the workspace folders by path). */
async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ').slice(0, 120)}`);
  }
  return found;
}

test('an unused warm sandbox expires: its processes end, its workspace and its cgroup are given back', async (t) => {
  // Long enough that it is still there when looked at below on a busy machine (2 s was not).
  const s = await setup(t, { idleMs: 5000 });
  const warm = s.executor.warmSandboxes!;
  const first = await s.exec('docs', 'ls');
  t.is(first.stdout, 'guide\nreadme.md\n');
  t.false(first.timings.warm);
  await warm.settled();
  t.is(warm.size, 1);
  t.true((await processesMentioning(s.root)).length > 0, 'the warm sandbox runs');
  t.is(s.pool.counts().busy, 1, 'it holds a workspace');
  await until(() => (warm.size === 0 ? true : undefined), 30_000);
  await warm.settled();
  t.deepEqual(await processesMentioning(s.root), []);
  t.is(s.pool.counts().busy, 0);
  t.deepEqual(await s.runtime.leftoverCgroups(), []);
  const again = await s.exec('docs', 'ls');
  t.false(again.timings.warm, 'expired: the next command runs cold');
  t.is(again.stdout, first.stdout);
});

test('at most `max` warm sandboxes: the oldest is cancelled for a new one', async (t) => {
  const s = await setup(t, { max: 2 });
  const warm = s.executor.warmSandboxes!;
  for (const scope of ['docs', 'data', 'notes']) {
    await s.exec(scope, 'true');
    await warm.settled();
  }
  t.is(warm.size, 2);
  t.is(s.pool.counts().busy, 2, 'the cancelled one gave its workspace back');
  t.true((await s.exec('notes', 'ls')).timings.warm, 'the newest is there');
  t.true((await s.exec('data', 'ls')).timings.warm);
  const docs = await s.exec('docs', 'ls');
  t.false(docs.timings.warm, 'the oldest was cancelled');
  t.is(docs.stdout, 'guide\nreadme.md\n');
});

test('close cancels the warm sandboxes and leaves no process, workspace or cgroup', async (t) => {
  const s = await setup(t, {});
  await s.exec('docs', 'cat readme.md');
  await s.executor.warmSandboxes!.settled();
  t.is(s.executor.warmSandboxes!.size, 1);
  t.true((await processesMentioning(s.root)).length > 0);
  await s.executor.close();
  t.is(s.executor.warmSandboxes!.size, 0);
  t.deepEqual(await processesMentioning(s.root), []);
  t.deepEqual(s.pool.counts(), { busy: 0, idle: 0, pristines: 0 });
  t.deepEqual(await s.runtime.leftoverCgroups(), []);
});

test('a command that comes before the delay is over runs cold, and nothing is spawned in its way', async (t) => {
  const s = await setup(t, { delayMs: 60_000 });
  const warm = s.executor.warmSandboxes!;
  await s.exec('docs', 'ls');
  t.is(warm.size, 1, 'a warm sandbox is due');
  const next = await s.exec('docs', 'ls');
  t.false(next.timings.warm, 'not made yet: the command ran cold');
  t.is(next.stdout, 'guide\nreadme.md\n');
  t.deepEqual(await processesMentioning(s.root), [], 'the due sandbox was dropped before it was spawned');
  t.is(s.pool.counts().busy, 0);
  t.is(warm.size, 1, 'and one is due again after this command');
});
