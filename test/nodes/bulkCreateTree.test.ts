import test from 'ava';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

const rootCount = async () => (await f.call('GET', `/nodes/?project_id=${f.pid}`)).body.data.nodes.length;

test.serial('bulk-create makes a nested tree in one commit and maps every temp_id to its node id', async (t) => {
  const res = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    nodes: [
      // Children may come before their parents: the tree is ordered by the service.
      { name: 'page.md', type: 'markdown', content: '# page', parent_temp_id: 'docs' },
      { name: 'tree', type: 'folder', temp_id: 'root' },
      { name: 'docs', type: 'folder', temp_id: 'docs', parent_temp_id: 'root' },
      { name: 'data.json', type: 'json', content: { a: 1 }, temp_id: 'data', parent_temp_id: 'root' },
    ],
  });
  t.is(res.status, 201, JSON.stringify(res.body));
  const nodes = res.body.data.nodes as { id: string; path: string; parent_id: string | null }[];
  t.deepEqual(nodes.map((n) => n.path), ['tree/docs/page.md', 'tree', 'tree/docs', 'tree/data.json'], 'in the order given');
  t.is(nodes[0].parent_id, nodes[2].id);
  t.is(nodes[2].parent_id, nodes[1].id);
  t.deepEqual(res.body.data.created, [
    { temp_id: 'root', node_id: nodes[1].id },
    { temp_id: 'docs', node_id: nodes[2].id },
    { temp_id: 'data', node_id: nodes[3].id },
  ]);
  const versions = await Promise.all(nodes.map(async (n) => (await f.call('GET', `/nodes/${n.id}/versions`)).body.data.versions[0].project_version));
  t.deepEqual(new Set(versions), new Set([res.body.data.project_version]), 'one commit');
});

test.serial('bulk-create: an item may name an existing folder by parent_id', async (t) => {
  const box = await f.make('folder', 'box');
  const res = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    nodes: [
      { name: 'top.md', type: 'markdown', content: 't' },
      { name: 'inner.md', type: 'markdown', content: 'i', parent_id: box.id },
    ],
  });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.deepEqual(res.body.data.nodes.map((n: { path: string }) => n.path), ['top.md', 'box/inner.md']);
});

const refused: [title: string, nodes: unknown[], field: string][] = [
  ['a parent_temp_id naming no item', [{ name: 'a', type: 'folder', temp_id: 'a' }, { name: 'x.md', type: 'markdown', content: 'x', parent_temp_id: 'nope' }], 'nodes.1.parent_temp_id'],
  ['a cycle', [{ name: 'a', type: 'folder', temp_id: 'a', parent_temp_id: 'b' }, { name: 'b', type: 'folder', temp_id: 'b', parent_temp_id: 'a' }], 'parent_temp_id'],
  ['an item that is its own parent', [{ name: 'a', type: 'folder', temp_id: 'a', parent_temp_id: 'a' }], 'nodes.0.parent_temp_id'],
  ['both parent_id and parent_temp_id', [{ name: 'a', type: 'folder', temp_id: 'a' }, { name: 'x.md', type: 'markdown', content: 'x', parent_temp_id: 'a', parent_id: null }], 'nodes.1.parent_temp_id'],
  ['a parent_temp_id naming a file', [{ name: 'a.md', type: 'markdown', content: 'a', temp_id: 'a' }, { name: 'x.md', type: 'markdown', content: 'x', parent_temp_id: 'a' }], 'nodes.1.parent_temp_id'],
  ['a repeated temp_id', [{ name: 'a', type: 'folder', temp_id: 'a' }, { name: 'b', type: 'folder', temp_id: 'a' }], 'nodes.1.temp_id'],
  ['an unknown field (a parent reference not understood)', [{ name: 'a', type: 'folder', temp_id: 'a' }, { name: 'x.md', type: 'markdown', content: 'x', parent: 'a' }], 'nodes.1'],
  ['content on a folder', [{ name: 'a', type: 'folder', content: 'x' }], 'nodes.0.content'],
  ['a repeated path', [{ name: 'a.md', type: 'markdown', content: 'a' }, { name: 'a.md', type: 'markdown', content: 'b' }], 'nodes.1.name'],
];
for (const [title, nodes, field] of refused) {
  test.serial(`bulk-create refuses ${title} with 422 naming the field, writing nothing`, async (t) => {
    const before = await rootCount();
    const res = await f.call('POST', '/nodes/bulk-create', { project_id: f.pid, nodes });
    t.is(res.status, 422, JSON.stringify(res.body));
    t.true(JSON.stringify(res.body.error.details).includes(field), JSON.stringify(res.body.error));
    t.is(await rootCount(), before);
  });
}

test.serial('bulk-create refuses an unknown top-level field', async (t) => {
  const res = await f.call('POST', '/nodes/bulk-create', { project_id: f.pid, parent: 'x', nodes: [{ name: 'q.md', type: 'markdown', content: 'q' }] });
  t.is(res.status, 422);
});

test.serial('POST /nodes/{id}/move accepts parent_id as another name for new_parent_id', async (t) => {
  const dest = await f.make('folder', 'dest');
  const doc = await f.make('markdown', 'mover.md', null, 'm');
  const res = await f.call('POST', `/nodes/${doc.id}/move`, { parent_id: dest.id });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.data.path, 'dest/mover.md');
  t.is((await f.call('POST', `/nodes/${doc.id}/move`, { parent_id: null, new_parent_id: null })).status, 422, 'not both');
});

test.serial('a bulk-create conflict names the item as sent (children may come before their parents)', async (t) => {
  await f.make('folder', 'taken');
  const res = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    nodes: [
      { name: 'child.md', type: 'markdown', content: 'c', parent_temp_id: 't' },
      { name: 'taken', type: 'folder', temp_id: 't' },
    ],
  });
  t.is(res.status, 409, JSON.stringify(res.body));
  t.is(res.body.error.details.index, 1);
  t.is((await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=taken/child.md`)).status, 404);
});
