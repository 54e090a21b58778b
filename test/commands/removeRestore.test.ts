import test from 'ava';
import { removeNode } from '../../src/commands/removeNode.ts';
import { restoreNode } from '../../src/commands/restoreNode.ts';
import { errorCode } from '../content/helpers.ts';
import { commandFixture, P } from './helpers.ts';

test('rm moves a node to .trash/<id>_<name> with its id; permanent, or removing from the trash, deletes it', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const a = await f.write('docs/a.md', 'a');
  const r = await removeNode({ content: store }, f.user, { target: { path: 'docs/a.md' } });
  t.is(r.node.path, 'docs/a.md');
  t.false(r.permanent);
  t.is(r.trashed?.path, `.trash/${a.node.id}_a.md`);
  t.is(r.trashed?.id, a.node.id);
  t.is(r.trashed?.state, 'trashed');

  const gone = await removeNode({ content: store }, f.user, { target: { path: r.trashed!.path } });
  t.is(gone.trashed, null, 'what is in the trash is deleted for good');
  t.is(store.findById(a.node.id), null);

  await f.write('b.md', 'b');
  const forGood = await removeNode({ content: store }, f.user, { target: { path: 'b.md' }, permanent: true });
  t.true(forGood.permanent);
  t.is(forGood.trashed, null);
});

test('rm of a node found by id refuses one already in the trash (409)', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  await f.write('a.md', 'a');
  const r = await removeNode({ content: store }, f.user, { target: { node: store.getByPath(P, 'a.md') } });
  t.is(await errorCode(removeNode({ content: store }, f.user, { target: { node: store.getById(P, r.node.id) } })), 'CONFLICT');
});

test('a scoped caller restores only what was deleted from inside its scope; anything else is not found', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const d = { content: store, access: f.access };
  await f.write('docs/a.md', 'a');
  await f.write('secret/b.md', 'b');
  const a = await removeNode(d, f.user, { target: { path: 'docs/a.md' } });
  const b = await removeNode(d, f.user, { target: { path: 'secret/b.md' } });
  const docs = f.key('docs');

  const refused = await t.throwsAsync(restoreNode(d, docs, { trashPath: b.trashed!.path, originalPath: 'docs/b.md' }));
  t.is((refused as { code?: string }).code, 'NOT_FOUND');
  t.is(refused.message, 'Trash item not found.');

  const back = await restoreNode(d, docs, { trashPath: a.trashed!.path, originalPath: 'docs/a.md' });
  t.is(back.node.path, 'docs/a.md');
  t.is(back.node.id, a.node.id);
  t.is(back.from, a.trashed!.path);

  // A grant over the whole project sees every trash item.
  t.is((await restoreNode(d, f.user, { trashPath: b.trashed!.path, originalPath: 'secret/b.md' })).node.id, b.node.id);
});
