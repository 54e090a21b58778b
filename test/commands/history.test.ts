import test from 'ava';
import { diffProject } from '../../src/commands/diffProject.ts';
import { listProjectCommits } from '../../src/commands/listProjectCommits.ts';
import { Changelog } from '../../src/events/changelog.ts';
import { errorCode } from '../content/helpers.ts';
import { commandFixture, P } from './helpers.ts';

test('project commits are read as far as the scope (or a folder within it) reaches, in pages', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const d = { changelog: new Changelog(store) };
  await f.write('docs/a.md', 'a'); // 1
  await f.write('other/b.md', 'b'); // 2
  await f.write('docs/sub/c.md', 'c'); // 3

  const all = listProjectCommits(d, f.user, { limit: 2 });
  t.is(all.currentVersion, 3);
  t.deepEqual(all.commits.map((c) => c.projectVersion), [3, 2]);
  t.is(all.nextBefore, 2);
  t.deepEqual(listProjectCommits(d, f.user, { limit: 2, before: 2 }).commits.map((c) => c.projectVersion), [1]);

  const docs = f.key('docs', 'content:read');
  t.deepEqual(listProjectCommits(d, docs, { limit: 10 }).commits.map((c) => c.projectVersion), [3, 1]);
  t.deepEqual(listProjectCommits(d, docs, { limit: 10, within: 'docs/sub' }).commits.map((c) => c.projectVersion), [3]);
  t.throws(() => listProjectCommits(d, docs, { limit: 10, within: 'other' }), { message: 'This access key is limited to "docs".' });
});

test('a project diff says what happened to each node overall between two versions', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const d = { changelog: new Changelog(store) };
  await f.write('a.md', 'a'); // 1
  await f.write('b.md', 'b'); // 2
  await f.write('a.md', 'a2'); // 3
  await store.move(P, f.user.actor, 'b.md', 'c.md'); // 4
  await f.write('tmp.md', 't'); // 5
  await store.remove(P, f.user.actor, 'tmp.md'); // 6

  const diff = diffProject(d, f.user, { v1: 1, v2: 6 });
  t.deepEqual(
    diff.changes.map((c) => [c.path, c.oldPath, c.operation]),
    [['a.md', null, 'modified'], ['c.md', null, 'added']],
    'created and deleted within the range: left out; created then moved: added where it is',
  );
  t.deepEqual(diffProject(d, f.user, { v1: 2, v2: 4 }).changes.map((c) => [c.path, c.oldPath, c.operation]), [['a.md', null, 'modified'], ['c.md', 'b.md', 'moved']]);
  t.is(await errorCode(() => diffProject(d, f.user, { v1: 1, v2: 9 })), 'NOT_FOUND');
  t.is(await errorCode(() => diffProject(d, f.user, { v1: 3, v2: 2 })), 'VALIDATION_ERROR');
});
