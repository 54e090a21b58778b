import test from 'ava';
import { createKey } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newProject } from '../git/gitFixture.ts';

/** GET /content/{id}/paths: every file's path and type, in pages (what the dashboard's quick open reads). */
let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

type PathsPage = { files: { path: string; type: string }[]; node_count: number; next_cursor: string | null };

test('paths lists every file (no folder) once, in the tree order, across pages; bad limits and cursors are 422', async (t) => {
  const p = await newProject(server, 'paths');
  const c = (route: string, token = p.token) => server.api('GET', `/content/${p.projectId}${route}`, { token });
  const files: { path: string; content: unknown; node_type: string }[] = [];
  for (let d = 0; d < 5; d++) for (let f = 0; f < 8; f++) files.push({ path: `d${d}/s${f % 2}/f${f}.md`, content: `${d}${f}`, node_type: 'markdown' });
  files.push({ path: 'top.json', content: { a: 1 }, node_type: 'json' });
  t.is((await server.api('POST', `/content/${p.projectId}/bulk-write`, { token: p.token, body: { files } })).status, 200);
  t.is((await server.api('POST', `/content/${p.projectId}/mkdir`, { token: p.token, body: { path: 'empty' } })).status, 201);

  // The same files, in the same order, as the tree's walk.
  type TreeNode = { path: string; type: string; children?: TreeNode[] | null };
  const walk = (n: TreeNode): TreeNode[] => (n.children ?? []).flatMap((k) => [k, ...walk(k)]);
  const tree = (await c('/tree?limit=5000')).body.data as TreeNode;
  const expected = walk(tree).filter((e) => e.type !== 'folder').map((e) => ({ path: e.path, type: e.type }));
  const whole = (await c('/paths')).body.data as PathsPage;
  t.is(whole.next_cursor, null);
  t.deepEqual(whole.files, expected);
  t.is(whole.files.length, 41);
  t.true(whole.files.some((f) => f.path === 'top.json' && f.type === 'json'));
  t.false(whole.files.some((f) => f.path === 'empty' || f.path === 'd0'), 'no folders');

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { data: PathsPage } } = await c(`/paths?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(res.status, 200);
    t.true(res.body.data.node_count <= 7);
    seen.push(...res.body.data.files.map((f) => f.path));
    cursor = res.body.data.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  t.deepEqual(seen, expected.map((f) => f.path), 'every file exactly once');
  t.true(pages >= 8);
  t.deepEqual((await c('/paths?path=d3/s1')).body.data.files.map((f: { path: string }) => f.path), ['d3/s1/f1.md', 'd3/s1/f3.md', 'd3/s1/f5.md', 'd3/s1/f7.md']);
  t.is((await c('/paths?limit=0')).status, 422);
  t.is((await c('/paths?limit=50001')).status, 422);
  t.is((await c('/paths?cursor=bm90LWEtY3Vyc29y')).status, 422);
  t.is((await c('/paths?path=nope')).status, 404);
  t.is((await c('/paths', 'not-a-token')).status, 401);
});

test('a key scoped to a folder gets the paths inside its scope only; outside it, 403', async (t) => {
  const p = await newProject(server, 'scoped paths');
  await server.api('POST', `/content/${p.projectId}/bulk-write`, {
    token: p.token,
    body: { files: [{ path: 'team/docs/a.md', content: 'a', node_type: 'markdown' }, { path: 'team/secret.md', content: 's', node_type: 'markdown' }, { path: 'other/b.md', content: 'b', node_type: 'markdown' }] },
  });
  const { key } = await createKey(server, p.token, p.projectId, { scope_path: 'team/docs', mode: 'read' });
  const c = (route: string) => server.api('GET', `/content/${p.projectId}${route}`, { token: key });
  const root = await c('/paths');
  t.is(root.status, 200, JSON.stringify(root.body));
  t.deepEqual(root.body.data.files, [{ path: 'team/docs/a.md', type: 'markdown' }]);
  t.is((await c('/paths?path=other')).status, 403);
});
