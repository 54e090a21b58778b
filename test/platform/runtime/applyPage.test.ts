import test from 'ava';
import { alice, fixture } from '../../content/helpers.ts';
import { planPage, type PageScope } from '../../../src/platform/runtime/applyPage.ts';
import type { ItemRow } from '../../../src/platform/runtime/itemStore.ts';
import type { SourceChange } from '../../../src/platform/runtime/connector.ts';

// How one pulled page becomes mutations, against a real content store: paths that collide or
// that the store refuses, items too large, files already there.

const P = 'prj_applypage';
const upsert = (sourceId: string, path: string, content: unknown, type: 'json' | 'markdown' = 'markdown', v = '1'): SourceChange => ({
  kind: 'upsert',
  item: { sourceId, path, type, content, sourceVersion: v },
});

async function withStore(run: (scope: PageScope, write: (path: string, content: string) => Promise<string>) => Promise<void>): Promise<void> {
  const f = fixture();
  try {
    await f.store.createProject(P);
    const write = async (path: string, content: string) => (await f.store.write(P, alice, { path, type: 'markdown', content })).node.id;
    await run({ content: f.store, projectId: P, folder: 'src', rows: new Map<string, ItemRow>(), owners: new Map(), maxContentBytes: 1000 }, write);
  } finally {
    await f.cleanup();
  }
}

test('two items of one path get distinct names; unsafe segments are replaced, not fatal', async (t) => {
  await withStore(async (scope) => {
    const plan = planPage(scope, [upsert('a', 'notes/x.md', 'A'), upsert('b', 'notes/x.md', 'B'), upsert('c', '../.git/config.md', 'C')]);
    const paths = plan.rows.map((r) => r.nodePath);
    t.deepEqual(paths.slice(0, 2), ['src/notes/x.md', 'src/notes/x (2).md']);
    t.false(paths[2]!.includes('..'));
    t.false(/(^|\/)\.git(\/|$)/.test(paths[2]!));
    t.is(plan.created, 3);
    t.is(plan.mutations.length, 3);
  });
});

test('an item larger than a node may be is skipped with a warning; the rest of the page goes on', async (t) => {
  await withStore(async (scope) => {
    const plan = planPage(scope, [upsert('big', 'big.md', 'x'.repeat(2000)), upsert('small', 'small.md', 'ok')]);
    t.is(plan.rows.length, 1);
    t.is(plan.skipped.length, 1);
    t.regex(plan.skipped[0]!, /big\.md: 2000 bytes/);
  });
});

test('a file already at the path that no item owns is adopted, and a different content is a conflict', async (t) => {
  await withStore(async (scope, write) => {
    const id = await write('src/readme.md', 'written here');
    const plan = planPage(scope, [upsert('r', 'readme.md', 'from the source')]);
    t.is(plan.rows[0]!.nodeId, id);
    t.deepEqual(plan.conflicts, ['src/readme.md']);
    t.is(plan.updated, 1);
  });
});

test('an unchanged item is not touched; the last change of an item in a page counts', async (t) => {
  await withStore(async (scope, write) => {
    const id = await write('src/a.md', 'A');
    const node = scope.content.findById(id)!;
    scope.rows.set('a', { sourceId: 'a', nodeId: id, nodePath: 'src/a.md', path: 'a.md', sourceVersion: '1', contentHash: node.contentHash, meta: {} });
    scope.owners.set(id, 'a');
    t.is(planPage(scope, [upsert('a', 'a.md', 'A')]).mutations.length, 0);
    const plan = planPage(scope, [upsert('a', 'a.md', 'A2', 'markdown', '2'), { kind: 'delete', sourceId: 'a' }]);
    t.deepEqual(plan.mutations, [{ op: 'remove', path: 'src/a.md' }]);
    t.deepEqual(plan.removed, ['a']);
  });
});
