import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CliUser } from '../cli/harness.ts';
import { createProject, defaultProject } from '../helpers/project.ts';
import { nodesCluster, until, type NodesCluster } from './nodesHarness.ts';

// Moving copies and draining a node (docs/architecture.md, "Several nodes") on four nodes of one
// cluster in this process (R = 3, so one node holds no copy of a given project). The tests share
// the cluster and run in order: the drain empties n4, which the error cases then use.

const started = nodesCluster(test.after.always);
let shared: Promise<NodesCluster> | null = null;
const cluster = () =>
  (shared ??= (async () => {
    const c = await started();
    for (const id of ['n1', 'n2', 'n3', 'n4']) await c.start(id);
    return c;
  })());


const gitdir = (c: NodesCluster, id: string, project: string) => join(c.node(id).dataDir, `${project}.git`);
const git = (dir: string, ...args: string[]) => {
  try {
    return execFileSync('git', [`--git-dir=${dir}`, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const mainOf = (c: NodesCluster, id: string, project: string) => git(gitdir(c, id, project), 'rev-parse', 'main');
const filesOf = (c: NodesCluster, id: string, project: string) => new Set((git(gitdir(c, id, project), 'ls-tree', '-r', '--name-only', 'main') ?? '').split('\n'));
const placementOf = (c: NodesCluster, project: string) => c.node('n1').services.node!.placementOf(project, true, false, false);

/**
 * Writes one file after another through `via` until stopped, each retried on 503 (a client
 * honouring the answer, after 25 ms rather than the Retry-After second); keeps what was acknowledged.
 */
function writeStream(c: NodesCluster, via: string, token: string, project: string, prefix: string) {
  const acknowledged: string[] = [];
  const latencies: number[] = [];
  const failures: string[] = [];
  let refused = 0;
  let stop = false;
  const running = (async () => {
    for (let i = 0; !stop; i++) {
      const path = `${prefix}/${i}.md`;
      const t0 = performance.now();
      for (;;) {
        const w = await c.node(via).api('POST', `/content/${project}/write`, { token, body: { path, content: `# ${i}\n`, node_type: 'markdown' } });
        if (w.status === 200 || w.status === 201) break;
        if (w.status !== 503) {
          failures.push(`${path}: ${w.status} ${JSON.stringify(w.body)}`);
          return;
        }
        refused++;
        await new Promise((r) => setTimeout(r, 25));
      }
      latencies.push(performance.now() - t0);
      acknowledged.push(path);
    }
  })();
  return {
    acknowledged,
    async stop() {
      // At least a few writes on either side of the move.
      await until('some writes', () => (acknowledged.length >= 5 ? true : undefined));
      stop = true;
      await running;
      const sorted = [...latencies].sort((a, b) => a - b);
      return { refused, failures, max: Math.round(sorted.at(-1) ?? 0), count: sorted.length };
    },
  };
}

test.serial("a replica's copy moves to the fourth node while writes go on: every acknowledged write is on the new copy, and the old one leaves", async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n1'), admin.token, orgId, 'replica-move');
  for (let i = 0; i < 3; i++) await c.node('n2').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: `seed/${i}.md`, content: `seed ${i}`, node_type: 'markdown' } });
  const before = (await placementOf(c, projectId))!;
  t.is(before.primary, 'n1');
  const from = before.copies.find((n) => n !== 'n1')!;
  const to = ['n2', 'n3', 'n4'].find((n) => !before.copies.includes(n))!;

  const stream = writeStream(c, 'n3', admin.token, projectId, 'during');
  await until('writes flowing', () => (stream.acknowledged.length >= 3 ? true : undefined));
  const moved = await c.node('n2').api('POST', '/cluster/moves', { token: admin.token, body: { project_id: projectId, to, from } });
  const writes = await stream.stop();
  t.log(`replica move ${from} → ${to}: ${moved.body.data?.duration_ms} ms; ${writes.count} writes, ${writes.refused} answered 503, slowest ${writes.max} ms`);
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body.data, { project_id: projectId, kind: 'replica', from, to, primary: 'n1', epoch: before.epoch });
  t.deepEqual(writes.failures, []);

  const after = (await placementOf(c, projectId))!;
  t.deepEqual(after.copies, [...before.copies.filter((n) => n !== from), to].sort());
  t.is(after.primary, 'n1');
  // The new copy reaches the primary's tip and holds every acknowledged write; the old copy is removed.
  await until('the new copy at the primary’s tip', () => (mainOf(c, to, projectId) !== null && mainOf(c, to, projectId) === mainOf(c, 'n1', projectId) ? true : undefined));
  const files = filesOf(c, to, projectId);
  for (const path of [...stream.acknowledged, 'seed/0.md']) t.true(files.has(path), `${path} is not on ${to}`);
  await until('the old copy removed', () => (existsSync(gitdir(c, from, projectId)) ? undefined : true));
  // Writes go on with the new copy counted.
  const w = await c.node(from).api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'after.md', content: 'after', node_type: 'markdown' } });
  t.is(w.status, 201, JSON.stringify(w.body));
  await until('the new copy has the next write', () => (filesOf(c, to, projectId).has('after.md') ? true : undefined));
});

test.serial('the primary moves while writes go on: the new node writes at the next epoch, the old primary is fenced and leaves; a switchover keeps every copy', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n2'), admin.token, orgId, 'primary-move');
  await c.node('n2').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'seed.md', content: 'seed', node_type: 'markdown' } });
  const before = (await placementOf(c, projectId))!;
  t.is(before.primary, 'n2');
  const to = ['n1', 'n3', 'n4'].find((n) => !before.copies.includes(n))!;
  const via = ['n1', 'n3', 'n4'].find((n) => n !== to)!;

  const stream = writeStream(c, via, admin.token, projectId, 'during');
  await until('writes flowing', () => (stream.acknowledged.length >= 3 ? true : undefined));
  const moved = await c.node('n1').api('POST', '/cluster/moves', { token: admin.token, body: { project_id: projectId, to } });
  const writes = await stream.stop();
  t.log(`primary move n2 → ${to}: ${moved.body.data?.duration_ms} ms; ${writes.count} writes, ${writes.refused} answered 503, slowest ${writes.max} ms`);
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body.data, { kind: 'primary', from: 'n2', to, primary: to, epoch: before.epoch + 1 });
  t.deepEqual(writes.failures, []);
  const after = (await placementOf(c, projectId))!;
  t.like(after, { primary: to, epoch: before.epoch + 1, state: 'ok' });
  t.false(after.copies.includes('n2'));
  t.is(after.copies.length, 3);
  // Every acknowledged write is read back through the old primary (forwarded to the new one).
  for (const path of ['seed.md', ...stream.acknowledged]) {
    const r = await c.node('n2').api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token });
    t.is(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  }
  const files = filesOf(c, to, projectId);
  for (const path of stream.acknowledged) t.true(files.has(path), `${path} is not on ${to}`);
  await until('the old primary’s copy removed', () => (existsSync(gitdir(c, 'n2', projectId)) ? undefined : true));

  // A switchover: a replica becomes the primary, the old primary stays a replica of the next epoch and is fenced by it.
  const replica = after.copies.find((n) => n !== to)!;
  const switched = await c.node('n3').api('POST', '/cluster/moves', { token: admin.token, body: { project_id: projectId, to: replica } });
  t.is(switched.status, 200, JSON.stringify(switched.body));
  t.like(switched.body.data, { kind: 'switchover', from: null, to: replica, primary: replica, epoch: before.epoch + 2 });
  t.deepEqual(switched.body.data.copies, after.copies);
  const state = JSON.parse(readFileSync(join(gitdir(c, to, projectId), 'cns-copy.json'), 'utf8')) as { epoch: number; role: string };
  t.like(state, { role: 'replica' });
  t.true(state.epoch >= before.epoch + 2);
  // Its shipments of the old epoch would be refused by the sealed copies: it writes nothing now, and a write through it reaches the new primary.
  const w = await c.node(to).api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'switched.md', content: 'x', node_type: 'markdown' } });
  t.is(w.status, 201, JSON.stringify(w.body));
  await until('the write on the new primary', () => (filesOf(c, replica, projectId).has('switched.md') ? true : undefined));
});

test.serial('cns cluster drain moves every copy off a node (primaries too) while it keeps answering; it ends left and holds nothing', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  // n4 writes a project of its own, and holds copies of others from the tests before.
  const own = await createProject(c.node('n4'), admin.token, orgId, 'on-n4');
  await c.node('n4').api('POST', `/content/${own}/write`, { token: admin.token, body: { path: 'a.md', content: 'a', node_type: 'markdown' } });
  const u = new CliUser();
  t.teardown(() => u.dispose());
  await u.login(c.node('n2'));
  const status = await u.run(['cluster', 'status']);
  t.is(status.code, 0, status.stderr);
  t.regex(status.stdout, /NODE\s+STATE\s+URL/);
  t.regex(status.stdout, /n4\s+up\s+http/);

  const drained = await u.run(['cluster', 'drain', 'n4']);
  t.is(drained.code, 0, drained.stderr);
  t.regex(drained.stdout, /Node n4 is drained \(left\)/);
  const listed = (await c.node('n1').api('GET', '/cluster', { token: admin.token })).body.data.nodes as { id: string; state: string; projects: { primary: number; copies: number } }[];
  t.like(listed.find((n) => n.id === 'n4'), { state: 'left', projects: { primary: 0, copies: 0 } });
  const p = (await placementOf(c, own))!;
  t.not(p.primary, 'n4');
  t.false(p.copies.includes('n4'));
  t.is(p.copies.length, 3);
  // A drained node still routes: a write through it reaches the project's new primary.
  const w = await c.node('n4').api('POST', `/content/${own}/write`, { token: admin.token, body: { path: 'b.md', content: 'b', node_type: 'markdown' } });
  t.is(w.status, 201, JSON.stringify(w.body));
  t.is((await c.node('n1').api('GET', `/content/${own}/cat?path=a.md`, { token: admin.token })).body.data?.content, 'a');
  // Asking again is harmless.
  const again = await c.node('n1').api('POST', '/cluster/nodes/n4/drain', { token: admin.token });
  t.is(again.status, 202);
  t.like(again.body.data, { node: 'n4', state: 'left' });
});

test.serial('refused moves and drains: 403 for a non-administrator, 404 unknown project or node, 409 when not possible, 422 bad input', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n1'), admin.token, orgId, 'refusals');
  await c.node('n1').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'x.md', content: 'x', node_type: 'markdown' } });
  const p = (await placementOf(c, projectId))!;
  const replica = p.copies.find((n) => n !== p.primary)!;
  const move = (body: unknown, token = admin.token) => c.node('n2').api('POST', '/cluster/moves', { token, body });

  const user = await c.node('n1').createUser('mover@example.com');
  t.is((await move({ project_id: projectId, to: replica }, user.token)).status, 403);
  t.is((await c.node('n1').api('POST', '/cluster/nodes/n3/drain', { token: user.token })).status, 403);

  const unknownProject = await move({ project_id: 'prj_nope', to: replica });
  t.is(unknownProject.status, 404, JSON.stringify(unknownProject.body));
  const unknownNode = await move({ project_id: projectId, to: 'n9' });
  t.is(unknownNode.status, 404, JSON.stringify(unknownNode.body));
  t.is((await c.node('n1').api('POST', '/cluster/nodes/n9/drain', { token: admin.token })).status, 404);

  const cases: [string, unknown][] = [
    ['a drained node takes no copies', { project_id: projectId, to: 'n4' }],
    ['the node already writes it', { project_id: projectId, to: p.primary }],
    ['the target already holds a copy', { project_id: projectId, to: replica, from: p.primary }],
    ['the source holds no copy', { project_id: projectId, to: replica, from: 'n4' }],
  ];
  for (const [why, body] of cases) {
    const r = await move(body);
    t.is(r.status, 409, `${why}: ${JSON.stringify(r.body)}`);
    t.is(r.body.code, 'CONFLICT');
  }
  // Three nodes up and three copies a project: draining one would leave too few.
  const noRoom = await c.node('n1').api('POST', '/cluster/nodes/n3/drain', { token: admin.token });
  t.is(noRoom.status, 409, JSON.stringify(noRoom.body));
  t.regex(noRoom.body.message, /fewer than 3 copies/);

  for (const body of [{ project_id: projectId }, { project_id: projectId, to: 'N 1' }, { project_id: projectId, to: replica, from: replica }]) {
    const r = await move(body);
    t.is(r.status, 422, JSON.stringify(r.body));
  }
  t.is((await c.node('n1').api('POST', '/cluster/nodes/Bad%20Id/drain', { token: admin.token })).status, 422);
  // Nothing moved.
  t.deepEqual((await placementOf(c, projectId))!.copies, p.copies);
});
