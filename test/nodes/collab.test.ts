import test from 'ava';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

const text = (...lines: string[]) => lines.join('\n') + '\n';

test('checkout gives content and version for each node', async (t) => {
  const md = await f.make('markdown', 'co.md', null, 'hello');
  const js = await f.make('json', 'co.json', null, { a: 1 });
  const res = await f.call('POST', '/collab/checkout', { project_id: f.pid, node_ids: [js.id, md.id] });
  t.is(res.status, 200);
  t.deepEqual(res.body.data.nodes.map((n: { id: string; version: number; content: unknown }) => [n.id, n.version, n.content]), [
    [js.id, 1, { a: 1 }],
    [md.id, 1, 'hello'],
  ]);
  t.is((await f.call('POST', '/collab/checkout', { project_id: f.pid, node_ids: ['nope'] })).status, 404);
});

test('commit: several nodes in ONE commit; a clean text merge is committed and reported', async (t) => {
  const md = await f.make('markdown', 'merge.md', null, text('a', 'b', 'c', 'd', 'e'));
  const other = await f.make('markdown', 'other.md', null, 'x');
  const base = (await f.call('POST', '/collab/checkout', { project_id: f.pid, node_ids: [md.id] })).body.data.nodes[0];
  // Someone else changes the first line meanwhile.
  await f.call('PUT', `/nodes/${md.id}`, { content: text('A', 'b', 'c', 'd', 'e') });
  const res = await f.call('POST', '/collab/commit', {
    project_id: f.pid,
    mutations: [
      { node_id: md.id, content: text('a', 'b', 'c', 'd', 'E'), message: 'fix the end', base_version: base.version },
      { node_id: other.id, content: 'y', message: 'and this' },
    ],
  });
  t.is(res.status, 200);
  t.true(res.body.data.merged);
  const [m, o] = res.body.data.nodes;
  t.true(m.merged);
  t.false(o.merged);
  t.is(m.version, 3);
  t.is((await f.call('GET', `/nodes/${md.id}`)).body.data.content, text('A', 'b', 'c', 'd', 'E'));
  t.is((await f.call('GET', `/nodes/${other.id}`)).body.data.content, 'y');
  const v1 = (await f.call('GET', `/nodes/${md.id}/versions`)).body.data.versions[0];
  const v2 = (await f.call('GET', `/nodes/${other.id}/versions`)).body.data.versions[0];
  t.is(v1.commit_id, v2.commit_id, 'one commit');
  t.is(v1.commit_id, res.body.data.commit_id);
});

test('a clean json merge, key by key and recursively', async (t) => {
  const js = await f.make('json', 'cfg.json', null, { name: 'n', nested: { a: 1, b: 2 }, list: [1, 2], gone: true });
  await f.call('PUT', `/nodes/${js.id}`, { content: { name: 'renamed', nested: { a: 10, b: 2 }, list: [1, 2], gone: true } });
  const res = await f.call('POST', '/collab/commit', {
    project_id: f.pid,
    mutations: [{ node_id: js.id, content: { name: 'n', nested: { a: 1, b: 20, c: 3 }, list: [1, 2, 3] }, base_version: 1 }],
  });
  t.is(res.status, 200);
  t.true(res.body.data.nodes[0].merged);
  t.deepEqual((await f.call('GET', `/nodes/${js.id}`)).body.data.content, { name: 'renamed', nested: { a: 10, b: 20, c: 3 }, list: [1, 2, 3] });
});

test('a conflict answers 409 with the regions of each node, and nothing is written', async (t) => {
  const md = await f.make('markdown', 'clash.md', null, text('one', 'two', 'three'));
  const js = await f.make('json', 'clash.json', null, { k: 1, arr: [1] });
  const fine = await f.make('markdown', 'fine.md', null, 'ok');
  await f.call('PUT', `/nodes/${md.id}`, { content: text('one', 'TWO (theirs)', 'three') });
  await f.call('PUT', `/nodes/${js.id}`, { content: { k: 2, arr: [1, 2] } });
  const res = await f.call('POST', '/collab/commit', {
    project_id: f.pid,
    mutations: [
      { node_id: fine.id, content: 'changed', base_version: 1 },
      { node_id: md.id, content: text('one', 'two (mine)', 'three'), base_version: 1 },
      { node_id: js.id, content: { k: 3, arr: [1, 3] }, base_version: 1 },
    ],
  });
  t.is(res.status, 409);
  t.false(res.body.success);
  t.is(res.body.error.code, 'CONFLICT');
  const conflicts = res.body.error.details.conflicts;
  t.is(conflicts.length, 2);
  const textConflict = conflicts.find((c: { node_id: string }) => c.node_id === md.id);
  t.is(textConflict.kind, 'text');
  t.deepEqual(textConflict.regions[0].current.lines, ['TWO (theirs)']);
  t.deepEqual(textConflict.regions[0].incoming.lines, ['two (mine)']);
  t.deepEqual(textConflict.regions[0].base.lines, ['two']);
  t.is(textConflict.regions[0].base.start_line, 2);
  t.regex(textConflict.merged_text, /<<<<<<< current \(version 2\)\nTWO \(theirs\)\n\|\|\|\|\|\|\| base \(version 1\)\ntwo\n=======\ntwo \(mine\)\n>>>>>>> incoming/);
  const jsonConflict = conflicts.find((c: { node_id: string }) => c.node_id === js.id);
  t.deepEqual(jsonConflict.regions.map((r: { pointer: string }) => r.pointer), ['/k', '/arr'], 'arrays are values');
  t.deepEqual(jsonConflict.regions[1], { pointer: '/arr', base: [1], current: [1, 2], incoming: [1, 3] });

  t.is((await f.call('GET', `/nodes/${fine.id}`)).body.data.content, 'ok', 'nothing written, not even the clean node');
  t.is((await f.call('GET', `/nodes/${md.id}`)).body.data.version, 2);
  t.is((await f.call('GET', `/nodes/${js.id}`)).body.data.version, 2);
});

test('commit without base_version overwrites; a base_version ahead of the node is 422', async (t) => {
  const md = await f.make('markdown', 'plain.md', null, 'a');
  const res = await f.call('POST', '/collab/commit', { project_id: f.pid, mutations: [{ node_id: md.id, content: 'b', message: 'm' }] });
  t.is(res.status, 200);
  t.false(res.body.data.merged);
  const ahead = await f.call('POST', '/collab/commit', { project_id: f.pid, mutations: [{ node_id: md.id, content: 'c', base_version: 9 }] });
  t.is(ahead.status, 422);
  const twice = await f.call('POST', '/collab/commit', { project_id: f.pid, mutations: [{ node_id: md.id, content: 'c' }, { node_id: md.id, content: 'd' }] });
  t.is(twice.status, 422);
});

test('merge answers the merge a commit would make, writing nothing: clean, conflicting text, conflicting json', async (t) => {
  const md = await f.make('markdown', 'preview.md', null, text('a', 'b', 'c', 'd', 'e'));
  await f.call('PUT', `/nodes/${md.id}`, { content: text('A', 'b', 'c', 'd', 'e') });
  const clean = await f.call('POST', '/collab/merge', { project_id: f.pid, node_id: md.id, content: text('a', 'b', 'c', 'd', 'E'), base_version: 1 });
  t.is(clean.status, 200);
  t.like(clean.body.data, { clean: true, base_version: 1, current_version: 2, merged: text('A', 'b', 'c', 'd', 'E'), merged_text: text('A', 'b', 'c', 'd', 'E'), conflicts: [] });

  const clash = await f.call('POST', '/collab/merge', { project_id: f.pid, node_id: md.id, content: text('a!', 'b', 'c', 'd', 'e'), base_version: 1 });
  t.is(clash.status, 200);
  t.false(clash.body.data.clean);
  t.is(clash.body.data.merged, null);
  t.is(clash.body.data.merged_text, text('<<<<<<< current (version 2)', 'A', '||||||| base (version 1)', 'a', '=======', 'a!', '>>>>>>> incoming', 'b', 'c', 'd', 'e'));
  t.is(clash.body.data.conflicts.length, 1);

  const js = await f.make('json', 'preview.json', null, { title: 't', size: 1, tags: ['x'] });
  await f.call('PUT', `/nodes/${js.id}`, { content: { title: 'theirs', size: 1, tags: ['x'] } });
  const json = await f.call('POST', '/collab/merge', { project_id: f.pid, node_id: js.id, content: { title: 'mine', size: 2, tags: ['x'] }, base_version: 1 });
  t.is(json.status, 200);
  t.false(json.body.data.clean);
  t.deepEqual(json.body.data.conflicts, [{ pointer: '/title', base: 't', current: 'theirs', incoming: 'mine' }]);
  // Only the conflicting key is marked; the size change merged in.
  t.is(
    json.body.data.merged_text,
    ['{', '<<<<<<< current (version 2)', '  "title": "theirs",', '||||||| base (version 1)', '  "title": "t",', '=======', '  "title": "mine",', '>>>>>>> incoming', '  "size": 2,', '  "tags": [', '    "x"', '  ]', '}', ''].join('\n'),
  );

  // Nothing was written by any of the three.
  t.is((await f.call('GET', `/nodes/${md.id}`)).body.data.version, 2);
  t.is((await f.call('GET', `/nodes/${js.id}`)).body.data.version, 2);
  const ahead = await f.call('POST', '/collab/merge', { project_id: f.pid, node_id: js.id, content: {}, base_version: 9 });
  t.is(ahead.status, 422);
  t.is((await f.call('POST', '/collab/merge', { project_id: f.pid, node_id: 'nope', content: {}, base_version: 1 })).status, 404);
});
