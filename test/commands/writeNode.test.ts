import test from 'ava';
import { writeNode, writeTypeOf } from '../../src/commands/writeNode.ts';
import { commandFixture, P } from './helpers.ts';

test('a new node takes the requested type, else the one its name says; an existing node keeps its own', async (t) => {
  const f = commandFixture(t);
  const { store } = f;
  t.is(writeTypeOf(store, P, 'docs/a.md'), 'markdown');
  t.is(writeTypeOf(store, P, 'docs/a.markdown'), 'markdown');
  t.is(writeTypeOf(store, P, 'data/b.JSON'), 'json');
  t.is(writeTypeOf(store, P, 'img/c.png'), 'file');
  t.is(writeTypeOf(store, P, 'notes.v2/readme'), 'file', 'a dot in a folder name says nothing');
  t.is(writeTypeOf(store, P, 'docs/a.md', 'file'), 'file', 'requested wins for a new node');

  await writeNode({ content: store }, f.user, { path: 'docs/a.md', type: 'json', content: { a: 1 } });
  t.is(writeTypeOf(store, P, 'docs/a.md', 'markdown'), 'json', 'an existing node keeps its type');
  t.is(writeTypeOf(store, P, 'docs', 'markdown'), 'markdown', 'a folder at the path is no type to keep');
});

test('created is the first version only: an update and an unchanged write are not', async (t) => {
  const f = commandFixture(t);
  const d = { content: f.store };
  const first = await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'one' });
  t.true(first.created);
  t.true(first.changed);
  const second = await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'two' });
  t.false(second.created);
  t.true(second.changed);
  t.is(second.node.version, 2);
  const same = await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'two' });
  t.false(same.created);
  t.false(same.changed);
  t.is(same.projectVersion, null);
});

test('a change made through an endpoint without a message says what and through what; the caller\'s words win', async (t) => {
  const f = commandFixture(t);
  const d = { content: f.store };
  const via = 'via MCP endpoint "docs"';
  await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'one', via });
  await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'two', via, message: 'my words' });
  await writeNode(d, f.user, { path: 'a.md', type: 'markdown', content: 'three' });
  const messages = f.store.listVersions(P, { path: 'a.md' }).versions.map((v) => v.message);
  t.deepEqual(messages, ['write a.md', 'my words', 'write a.md (via MCP endpoint "docs")']);
});
