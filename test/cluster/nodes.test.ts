import test from 'ava';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { defaultProject, createProject } from '../helpers/project.ts';
import { nodesCluster, type NodesCluster } from './nodesHarness.ts';

// Three nodes of one cluster in this process, on a NATS JetStream cluster and a PostgreSQL database
// of their own (docs/design/cluster.md §9). The tests share the cluster, each with its own projects.

const started = nodesCluster(test.after.always);
let shared: Promise<NodesCluster> | null = null;
const cluster = () =>
  (shared ??= (async () => {
    const c = await started();
    for (const id of ['n1', 'n2', 'n3']) await c.start(id);
    return c;
  })());

/** Polls with a deadline. */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const mainOf = (c: NodesCluster, id: string, project: string) => {
  try {
    return execFileSync('git', [`--git-dir=${join(c.node(id).dataDir, `${project}.git`)}`, 'rev-parse', 'main'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

test.serial('through any node: a project is created, written and read; each write is on a majority before it is acknowledged, and every node lists the cluster', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n2'), admin.token, orgId, 'clustered');
  const placed = await c.node('n3').api('GET', '/cluster', { token: admin.token });
  t.is(placed.status, 200, JSON.stringify(placed.body));
  t.deepEqual(placed.body.data.nodes.map((n: { id: string; state: string }) => [n.id, n.state]), [['n1', 'up'], ['n2', 'up'], ['n3', 'up']]);

  for (const [i, via] of ['n1', 'n2', 'n3', 'n1', 'n2', 'n3'].entries()) {
    const w = await c.node(via).api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: `notes/n${i}.md`, content: `# note ${i}\n`, node_type: 'markdown' } });
    t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
    // Acknowledged: the primary (n2, which created it) and at least one other copy hold the commit.
    const tip = mainOf(c, 'n2', projectId);
    t.true(['n1', 'n3'].some((id) => mainOf(c, id, projectId) === tip), `write ${i} through ${via} acknowledged before a replica held it`);
    // Read back through every node: each request runs on the primary, so a client reads its own write anywhere.
    for (const reader of ['n1', 'n2', 'n3']) {
      const r = await c.node(reader).api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(`notes/n${i}.md`)}`, { token: admin.token });
      t.is(r.status, 200, `read through ${reader}: ${JSON.stringify(r.body)}`);
      t.is(r.body.data.content, `# note ${i}\n`);
    }
  }
  // Every copy reaches the same history, and indexes it alike.
  await until('every copy at the primary’s tip', () => (['n1', 'n3'].every((id) => mainOf(c, id, projectId) === mainOf(c, 'n2', projectId)) ? true : undefined));
  const tree = (id: string) => JSON.stringify(c.node(id).services.content.tree(projectId));
  await until('every index like the primary’s', () => (tree('n1') === tree('n2') && tree('n3') === tree('n2') ? true : undefined));
  t.pass();
});

test.serial('the primary stops: another copy is elected with a new epoch, every acknowledged write is there, and writes go on through any node', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n3'), admin.token, orgId, 'failover');
  const acknowledged: string[] = [];
  for (let i = 0; i < 5; i++) {
    const w = await c.node('n1').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: `log/${i}.md`, content: `entry ${i}`, node_type: 'markdown' } });
    t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
    acknowledged.push(`log/${i}.md`);
  }
  await c.stop('n3');
  // Writes through n1 are refused (503, retry) until the new primary is elected, then taken.
  const after = await until('a write after the failover', async () => {
    const w = await c.node('n1').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'log/after.md', content: 'after', node_type: 'markdown' } });
    if (w.status === 201) return w;
    t.is(w.status, 503, JSON.stringify(w.body));
    return undefined;
  });
  t.is(after.status, 201);
  acknowledged.push('log/after.md');
  const placement = await c.node('n1').services.node!.placementOf(projectId, true);
  t.is(placement?.epoch, 2);
  t.true(placement?.primary === 'n1' || placement?.primary === 'n2');
  for (const via of ['n1', 'n2']) {
    for (const path of acknowledged) {
      const r = await c.node(via).api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token });
      t.is(r.status, 200, `${path} through ${via}: ${JSON.stringify(r.body)}`);
    }
  }
  // n3 comes back as a replica of the new epoch: its copy is brought to the primary's tip.
  await c.start('n3');
  const w = await c.node('n3').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'log/back.md', content: 'back', node_type: 'markdown' } });
  t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
  await until('n3 caught up', () => (mainOf(c, 'n3', projectId) === mainOf(c, placement!.primary!, projectId) ? true : undefined));
});
