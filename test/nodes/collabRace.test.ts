import test from 'ava';
import { holdWriter, until } from '../helpers/writerHold.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

// A collab commit is merged against the tip inside the project's serialized section: plain writes
// queued before it are what it merges with, writes queued after it build on it; none is lost and
// the merge is planned once.

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

const text = (...lines: string[]) => lines.join('\n') + '\n';

test.serial('a collab commit racing plain writes to the same node: merged with the one before, built on by the one after, each in history', async (t) => {
  const content = f.server.services.content;
  const md = await f.make('markdown', 'raced.md', null, text('a', 'b', 'c', 'd', 'e'));
  const start = content.projectVersion(f.pid);
  const hold = await holdWriter(content, f.pid);
  let before, commit, after;
  try {
    // A plain write, queued first: the collab commit (based on version 1) has not seen it.
    before = f.call('PUT', `/nodes/${md.id}`, { content: text('A', 'b', 'c', 'd', 'e') });
    await until('the first write to be queued', () => hold.commits === 1);
    commit = f.call('POST', '/collab/commit', { project_id: f.pid, mutations: [{ node_id: md.id, content: text('a', 'b', 'c', 'd', 'E'), base_version: 1 }] });
    await until('the collab commit to be queued', () => hold.planned === 1);
    // A plain write queued after it, expecting the version the merge makes.
    after = f.call('PUT', `/nodes/${md.id}`, { content: text('A', 'b', 'C', 'd', 'E'), base_version: 3 });
    await until('the last write to be queued', () => hold.commits === 2);
  } finally {
    await hold.release();
  }
  const [b, c, a] = await Promise.all([before, commit, after]);
  t.is(b.status, 200, JSON.stringify(b.body));
  t.is(c.status, 200, JSON.stringify(c.body));
  t.is(a.status, 200, JSON.stringify(a.body));
  t.true(c.body.data.nodes[0].merged);
  t.is(c.body.data.nodes[0].version, 3);

  const v2 = content.getVersion(f.pid, { id: md.id }, 2);
  t.deepEqual(hold.planTips, [v2.commitId], 'planned once, against the tip the first write made');
  t.is(c.body.data.project_version, v2.projectVersion + 1);
  const at = async (v: number) => (await content.versionContent(f.pid, { id: md.id }, v)).bytes.toString('utf8');
  t.is(await at(2), text('A', 'b', 'c', 'd', 'e'));
  t.is(await at(3), text('A', 'b', 'c', 'd', 'E'), 'the merge holds both changes');
  t.is(await at(4), text('A', 'b', 'C', 'd', 'E'));
  const commits = content.commitsAfter(f.pid, start, 10);
  t.deepEqual(
    commits.map((x) => x.projectVersion),
    [start + 1, start + 2, start + 3],
    'three commits, one after the other',
  );
  t.is(commits[1]!.commitId, c.body.data.commit_id);
});
