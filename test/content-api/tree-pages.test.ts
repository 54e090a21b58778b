import test from 'ava';
import { createKey } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newProject } from '../git/gitFixture.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

interface Node {
  id: string;
  path: string;
  type: string;
  children_count: number | null;
  created_at: string | null;
  children?: Node[] | null;
}

function flatten(n: Node, out: Node[] = []): Node[] {
  for (const c of n.children ?? []) {
    out.push(c);
    flatten(c, out);
  }
  return out;
}

test('tree comes in pages of at most limit nodes; following next_cursor gives every node exactly once, in order', async (t) => {
  const p = await newProject(server, 'paged');
  const c = (route: string, token = p.token) => server.api('GET', `/content/${p.projectId}${route}`, { token });
  const files = [];
  for (let d = 0; d < 7; d++) for (let f = 0; f < 9; f++) files.push({ path: `d${d}/s${f % 3}/f${f}.md`, content: `${d}${f}`, node_type: 'markdown' });
  files.push({ path: 'top.md', content: 't', node_type: 'markdown' });
  t.is((await server.api('POST', `/content/${p.projectId}/bulk-write`, { token: p.token, body: { files } })).status, 200);

  const whole = await c('/tree?limit=5000');
  const all = flatten(whole.body.data).map((n) => n.path);
  t.is(whole.body.data.next_cursor, null);
  t.is(all.length, 7 + 21 + 63 + 1);
  t.is(whole.body.data.node_count, all.length);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { data: Node & { next_cursor: string | null; node_count: number } } } = await c(`/tree?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(res.status, 200);
    t.true(res.body.data.node_count <= 10);
    const ids = new Set(seen);
    // Folders leading to a page's first node are repeated (to keep the page a tree), everything else is new.
    for (const n of flatten(res.body.data)) if (!ids.has(n.path)) seen.push(n.path);
    cursor = res.body.data.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  t.deepEqual(seen, all);
  t.true(pages >= 10);
  t.is((await c('/tree?cursor=bm90LWEtY3Vyc29y')).status, 422);
  t.is((await c('/tree?limit=0')).status, 422);
});

test('the root: real children_count and times, max_depth=0, stat of the root', async (t) => {
  const p = await newProject(server, 'rooted');
  const c = (route: string, token = p.token) => server.api('GET', `/content/${p.projectId}${route}`, { token });
  await server.api('POST', `/content/${p.projectId}/bulk-write`, {
    token: p.token,
    body: { files: [{ path: 'a/x.md', content: 'x', node_type: 'markdown' }, { path: 'b.md', content: 'b', node_type: 'markdown' }, { path: 'c/y.md', content: 'y', node_type: 'markdown' }] },
  });
  const tree = await c('/tree');
  t.is(tree.body.data.children_count, 3);
  t.truthy(tree.body.data.created_at);
  t.false(Number.isNaN(Date.parse(tree.body.data.created_at)));
  const shallow = await c('/tree?max_depth=0');
  t.is(shallow.body.data.children_count, 3);
  t.is(shallow.body.data.children, undefined);
  const one = await c('/tree?max_depth=1');
  t.deepEqual(one.body.data.children.map((n: Node) => [n.path, n.children_count]), [['a', 1], ['c', 1], ['b.md', null]]);
  const stat = await c('/stat');
  t.is(stat.status, 200);
  t.is(stat.body.data.type, 'folder');
  t.is(stat.body.data.path, '');
  t.is(stat.body.data.children_count, 3);
  t.is((await c('/stat?path=')).body.data.children_count, 3);
});

test('a key scoped to a subtree gets the tree of the root filtered like ls, not 403', async (t) => {
  const p = await newProject(server, 'scoped tree');
  await server.api('POST', `/content/${p.projectId}/bulk-write`, {
    token: p.token,
    body: { files: [{ path: 'team/docs/a.md', content: 'a', node_type: 'markdown' }, { path: 'team/secret.md', content: 's', node_type: 'markdown' }, { path: 'other/b.md', content: 'b', node_type: 'markdown' }] },
  });
  const { key } = await createKey(server, p.token, p.projectId, { scope_path: 'team/docs', mode: 'read' });
  const c = (route: string) => server.api('GET', `/content/${p.projectId}${route}`, { token: key });
  const ls = await c('/ls');
  t.is(ls.status, 200);
  const tree = await c('/tree');
  t.is(tree.status, 200, JSON.stringify(tree.body));
  t.deepEqual(flatten(tree.body.data).map((n) => n.path), ['team', 'team/docs', 'team/docs/a.md']);
  // Counts on the way down count only what the key may see.
  t.is(tree.body.data.children_count, 1);
  t.is(tree.body.data.children[0].children_count, 1);
  t.deepEqual(flatten((await c('/tree?path=team')).body.data).map((n) => n.path), ['team/docs', 'team/docs/a.md']);
  t.is((await c('/tree?path=other')).status, 403);
});
