import test from 'ava';
import { rollbackNode } from '../../src/commands/rollbackNode.ts';
import { rollbackPath } from '../../src/commands/rollbackPath.ts';
import { rollbackProject } from '../../src/commands/rollbackProject.ts';
import { errorCode } from '../content/helpers.ts';
import { commandFixture, P } from './helpers.ts';

test('a node rollback is a new version with the old content, carried back for json and markdown', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  await f.write('a.md', 'one');
  await f.write('a.md', 'two');
  const r = await rollbackNode({ content: store }, f.user, { node: store.getByPath(P, 'a.md'), version: 1, via: 'via MCP endpoint "e"' });
  t.true(r.changed);
  t.is(r.node.version, 3);
  t.is(r.restoredVersion, 1);
  t.is(r.bytes?.toString(), 'one');
  t.is(store.getVersion(P, { path: 'a.md' }, 3).message, 'rollback a.md to version 1 (via MCP endpoint "e")');

  await f.write('b.bin', Buffer.from([1]), 'file');
  await f.write('b.bin', Buffer.from([2]), 'file');
  t.is((await rollbackNode({ content: store }, f.user, { node: store.getByPath(P, 'b.bin'), version: 1 })).bytes, null, 'file bytes are not carried');
});

test('a path rollback: a node to its version at a project version, a folder with everything beneath it', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const d = { content: store };
  await f.write('docs/a.md', 'one'); // 1
  await f.write('docs/a.md', 'two'); // 2
  await f.write('docs/b.md', 'b'); // 3

  const node = await rollbackPath(d, f.user, { path: 'docs/a.md', targetVersion: 1 });
  t.true('node' in node && node.node.restoredVersion === 1);
  t.is(node.targetVersion, 1);

  const folder = await rollbackPath(d, f.user, { path: 'docs', targetVersion: 2 });
  t.true('folder' in folder);
  t.is(store.findByPath(P, 'docs/b.md'), null, 'created since: to the trash');
  t.is((await store.readContent(P, { path: 'docs/a.md' })).bytes.toString(), 'two');

  t.is(await errorCode(rollbackPath(d, f.user, { path: 'docs/a.md', targetVersion: 99 })), 'NOT_FOUND');
  await f.write('docs/c.md', 'c');
  const missing = await t.throwsAsync(rollbackPath(d, f.user, { path: 'docs/c.md', targetVersion: 1 }));
  t.is(missing.message, 'docs/c.md did not exist at project version 1');
});

test('only a grant over the whole project rolls the project back', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  const d = { content: store, access: f.access };
  await f.write('docs/a.md', 'one');
  await f.write('docs/a.md', 'two');
  t.is(await errorCode(rollbackProject(d, f.key('docs'), { targetVersion: 1 })), 'FORBIDDEN');
  const r = await rollbackProject(d, f.user, { targetVersion: 1 });
  t.true(r.changed);
  t.is(r.targetVersion, 1);
  t.is((await store.readContent(P, { path: 'docs/a.md' })).bytes.toString(), 'one');
});
