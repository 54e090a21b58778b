import test from 'ava';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, createKey, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

// jsdom without its type package (it would pull the browser DOM types into the whole project).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const { JSDOM } = createRequire(import.meta.url)('jsdom') as { JSDOM: new (html: string) => { window: { document: any } } };

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
});
test.after.always(async () => server?.stop());

const api = (method: string, path: string, body?: unknown, tk = token) => server.api(method, path, { token: tk, body });
const check = (t: import('ava').ExecutionContext, method: string, path: string, res: ApiResponse) => assertDocumented(t, server.services, method, path, res);

async function write(path: string, node_type: string, content: unknown): Promise<{ id: string; version: number }> {
  const res = await c('POST', '/write', { path, node_type, content });
  if (res.status !== 201 && res.status !== 200) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function publish(body: Record<string, unknown>, tk = token): Promise<{ id: string; publish_key: string; url: string }> {
  const res = await api('POST', '/publishes/', { project_id: projectId, ...body }, tk);
  if (res.status !== 201) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A public GET with no credential, the path sent exactly as given (no URL normalization of `..` or `%2e`). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: 'GET', path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}
const pub = (key: string, rest = '', headers: Record<string, string> = {}) => rawGet(`/api/v1/p/${key}${rest}`, headers);

test('publish CRUD: create, list, get, patch, delete, each answer documented; unknown fields are refused', async (t) => {
  const node = await write('crud/page.md', 'markdown', '# CRUD\n');
  const created = await api('POST', '/publishes/', { project_id: projectId, node_id: node.id });
  t.is(created.status, 201, JSON.stringify(created.body));
  check(t, 'post', '/publishes', created);
  const p = created.body.data;
  t.like(p, { project_id: projectId, node_id: node.id, version: null, enabled: true, expires_at: null, slug: null, status: 'live', node_type: 'markdown', node_path: 'crud/page.md' });
  t.regex(p.publish_key, /^pk_[A-Za-z0-9_-]{32}$/, '192 random bits, URL-safe');
  t.is(p.url, `${server.url.replace('127.0.0.1', 'localhost')}/api/v1/p/${p.publish_key}`);
  t.not((await publish({ node_id: node.id })).publish_key, p.publish_key, 'every publish has its own key');

  const list = await api('GET', `/publishes/?project_id=${projectId}`);
  check(t, 'get', '/publishes', list);
  t.true(list.body.data.publishes.some((x: { id: string }) => x.id === p.id));
  check(t, 'get', '/publishes/{publish_id}', await api('GET', `/publishes/${p.id}`));

  const patched = await api('PATCH', `/publishes/${p.id}`, { enabled: false });
  check(t, 'patch', '/publishes/{publish_id}', patched);
  t.like(patched.body.data, { enabled: false, status: 'disabled' });
  t.is((await api('PATCH', `/publishes/${p.id}`, { enabeld: true })).status, 422, 'a misspelt field is refused, not ignored');
  t.is((await api('PATCH', `/publishes/${p.id}`, {})).status, 422, 'an empty change is refused');
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: node.id, public: true })).status, 422);
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: node.id, expires_at: new Date(Date.now() - 1000).toISOString() })).status, 422, 'an expiry in the past');
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: 'nod_nope' })).status, 404);

  const deleted = await api('DELETE', `/publishes/${p.id}`);
  check(t, 'delete', '/publishes/{publish_id}', deleted);
  t.is((await api('GET', `/publishes/${p.id}`)).status, 404);
  t.is((await api('DELETE', `/publishes/${p.id}`)).status, 404);
});

test('publishing needs content:write on the node, inside the caller\'s scope; strangers learn nothing', async (t) => {
  const inside = await write('team/a.md', 'markdown', 'a');
  const outside = await write('private/b.md', 'markdown', 'b');
  const viewer = await server.createUser('pub-viewer@example.com');
  t.is((await api('POST', `/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' })).status, 201);
  const v = await api('POST', '/publishes/', { project_id: projectId, node_id: inside.id }, viewer.token);
  t.is(v.status, 403, 'a viewer may read but not publish');
  const mine = await publish({ node_id: inside.id });
  t.is((await api('PATCH', `/publishes/${mine.id}`, { enabled: false }, viewer.token)).status, 403);
  t.is((await api('GET', `/publishes/${mine.id}`, undefined, viewer.token)).status, 200, 'but may see it');

  const stranger = await server.createUser('pub-stranger@example.com');
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: inside.id }, stranger.token)).status, 404);
  t.is((await api('GET', `/publishes/${mine.id}`, undefined, stranger.token)).status, 404);
  t.is((await api('DELETE', `/publishes/${mine.id}`, undefined, stranger.token)).status, 404);
  t.is((await api('GET', `/publishes/?project_id=${projectId}`, undefined, stranger.token)).status, 404);

  const scoped = await createKey(server, token, projectId, { scope_path: 'team', mode: 'read_write' });
  const ok = await api('POST', '/publishes/', { project_id: projectId, node_id: inside.id }, scoped.key);
  t.is(ok.status, 201, 'a key publishes inside its scope');
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: outside.id }, scoped.key)).status, 403, 'not outside it');
  const hidden = await publish({ node_id: outside.id });
  const seen = (await api('GET', `/publishes/?project_id=${projectId}`, undefined, scoped.key)).body.data.publishes.map((p: { id: string }) => p.id);
  t.true(seen.includes(ok.body.data.id));
  t.false(seen.includes(hidden.id), "a scoped key does not list publishes of nodes beyond its scope");
  t.is((await api('DELETE', `/publishes/${hidden.id}`, undefined, scoped.key)).status, 403);
  const reader = await createKey(server, token, projectId, { mode: 'read' });
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: inside.id }, reader.key)).status, 403, 'a read-only key cannot publish');
});

test('markdown renders as a sanitized page: no script, no event handler, no javascript: link; strict CSP; ?format=md is the text', async (t) => {
  const markdown = [
    '# Release notes',
    '',
    'Some **bold** text and a [good link](https://example.com/docs).',
    '',
    '<script>document.title = "owned"</script>',
    '',
    '<img src="x.png" onerror="alert(1)">',
    '',
    '[click me](javascript:alert(1)) and <a href="JaVaScRiPt:alert(2)">again</a>',
    '',
    '<div onclick="alert(3)" style="position:fixed">overlay</div><iframe src="https://evil.example"></iframe>',
    '',
    '<form action="https://evil.example"><input name="password"></form>',
    '',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
    '',
    '```js',
    'let x = 1;',
    '```',
  ].join('\n');
  const node = await write('site/notes.md', 'markdown', markdown);
  const p = await publish({ node_id: node.id });
  const res = await pub(p.publish_key);
  t.is(res.status, 200);
  t.regex(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
  const csp = String(res.headers['content-security-policy']);
  t.regex(csp, /default-src 'none'/);
  t.notRegex(csp, /script-src/, 'no script source is allowed at all');
  t.is(res.headers['x-content-type-options'], 'nosniff');

  const doc = new JSDOM(res.body.toString('utf8')).window.document;
  t.is(doc.title, 'Release notes', 'the first heading is the title');
  t.is(doc.querySelector('h1')?.textContent, 'Release notes');
  t.is(doc.querySelectorAll('h1').length, 1);
  t.truthy(doc.querySelector('table td'), 'GFM tables survive');
  t.is(doc.querySelector('pre code')?.className, 'language-js');
  t.is(doc.querySelector('a[href="https://example.com/docs"]')?.textContent, 'good link');
  t.is(doc.querySelectorAll('script').length, 0);
  t.is(doc.querySelectorAll('iframe, form, input, object, embed').length, 0);
  const withHandlers = [...doc.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name) || a.name === 'style'));
  t.deepEqual(withHandlers.map((el) => el.outerHTML), []);
  const scripted = [...doc.querySelectorAll('[href], [src]')].filter((el) => /^\s*javascript:/i.test(el.getAttribute('href') ?? el.getAttribute('src') ?? ''));
  t.deepEqual(scripted.map((el) => el.outerHTML), []);
  t.truthy(doc.querySelector('img[src="x.png"]'), 'the image stays, without its handler');

  const md = await pub(p.publish_key, '?format=md');
  t.is(md.status, 200);
  t.regex(String(md.headers['content-type']), /^text\/markdown/);
  t.is(md.body.toString('utf8'), markdown);
  t.is((await pub(p.publish_key, '?format=json')).status, 422);
  t.is((await pub(p.publish_key, '?pointer=/a')).status, 422);
  t.is((await pub(p.publish_key, '?utm_source=newsletter')).status, 200, 'tracking parameters do not change what is served');
});

test('front matter shows as a table of properties; the title comes from it, else the first heading, else the file name', async (t) => {
  const page = async (path: string, markdown: string) => {
    const node = await write(path, 'markdown', markdown);
    const res = await pub((await publish({ node_id: node.id })).publish_key);
    t.is(res.status, 200);
    return new JSDOM(res.body.toString('utf8')).window.document;
  };
  const withFm = await page('fm/plan.md', '---\ntitle: Launch <plan>\ntags: [a, b]\n---\nSome text.\n');
  t.is(withFm.title, 'Launch <plan>');
  t.is(withFm.querySelector('h1')?.textContent, 'Launch <plan>', 'a heading of the title, escaped');
  const rows = [...withFm.querySelectorAll('table.front-matter tr')].map((tr) => [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent]);
  t.deepEqual(rows, [
    ['title', 'Launch <plan>'],
    ['tags', 'a, b'],
  ]);
  t.false(withFm.body.textContent.includes('---'), 'the fence is not shown');

  const noTitle = await page('fm/untitled-notes.md', 'Just a paragraph.\n');
  t.is(noTitle.title, 'untitled-notes');
  t.is(noTitle.querySelector('h1')?.textContent, 'untitled-notes');

  const broken = await page('fm/broken.md', '---\ntitle: [unclosed\n---\n# Still here\n');
  t.regex(broken.querySelector('.warning')?.textContent ?? '', /front matter could not be read/);
  t.is(broken.title, 'Still here');
  t.regex(broken.body.textContent, /title: \[unclosed/, 'the front matter shows as text');
});

test('json: the document, one member by ?pointer (RFC 6901), 404 for a missing member', async (t) => {
  const doc = { title: 'Menu', 'a/b': { 'c~d': 42 }, items: [{ name: 'tea' }, { name: 'cake' }] };
  const node = await write('data/menu.json', 'json', doc);
  const p = await publish({ node_id: node.id });
  const whole = await pub(p.publish_key);
  t.is(whole.status, 200);
  t.regex(String(whole.headers['content-type']), /^application\/json/);
  t.deepEqual(JSON.parse(whole.body.toString()), doc);
  t.deepEqual(JSON.parse((await pub(p.publish_key, '?pointer=/items/1')).body.toString()), { name: 'cake' });
  t.is(JSON.parse((await pub(p.publish_key, `?pointer=${encodeURIComponent('/a~1b/c~0d')}`)).body.toString()), 42);
  const missing = await pub(p.publish_key, '?pointer=/nope');
  t.is(missing.status, 404);
  t.is((await pub(p.publish_key, '?pointer=/title/x')).status, 422, 'a pointer through a string');
  t.is((await pub(p.publish_key, '?format=md')).status, 422);
  const a = await pub(p.publish_key, '?pointer=/items/0');
  const b = await pub(p.publish_key, '?pointer=/items/1');
  t.not(a.headers.etag, b.headers.etag, 'each member has its own ETag');
});

test('file: bytes with Content-Type, Content-Disposition, Range; HTML files are offered as downloads', async (t) => {
  const bytes = Buffer.from('0123456789abcdefghij');
  const node = await write('files/data.txt', 'file', bytes.toString('base64'));
  const p = await publish({ node_id: node.id });
  const whole = await pub(p.publish_key);
  t.is(whole.status, 200);
  t.deepEqual(whole.body, bytes);
  t.regex(String(whole.headers['content-type']), /^text\/plain/);
  t.regex(String(whole.headers['content-disposition']), /^inline; filename\*=UTF-8''data\.txt$/);
  t.is(whole.headers['accept-ranges'], 'bytes');
  t.regex(String(whole.headers['content-security-policy']), /sandbox/);
  const part = await pub(p.publish_key, '', { range: 'bytes=5-9' });
  t.is(part.status, 206);
  t.is(part.body.toString(), '56789');
  t.is(part.headers['content-range'], 'bytes 5-9/20');
  t.is((await pub(p.publish_key, '', { range: 'bytes=50-60' })).status, 416);
  const cached = await pub(p.publish_key, '', { 'if-none-match': String(whole.headers.etag) });
  t.is(cached.status, 304);
  t.is(cached.body.length, 0);
  t.is((await pub(p.publish_key, '?format=html')).status, 422, 'files take no format');

  const html = await write('files/page.html', 'file', Buffer.from('<script>alert(1)</script>').toString('base64'));
  const hp = await publish({ node_id: html.id });
  const h = await pub(hp.publish_key);
  t.is(h.status, 200);
  t.regex(String(h.headers['content-disposition']), /^attachment;/, 'a page that could run scripts is a download');
  t.regex(String(h.headers['content-security-policy']), /sandbox/);
});

test('folder: an index page whose links stay under the key, ?format=json the tree; nothing outside the folder is reachable', async (t) => {
  await write('site2/index.md', 'markdown', '# Home\n\n[guide](guide/intro.md)');
  await write('site2/guide/intro.md', 'markdown', '# Intro');
  await write('site2/data.json', 'json', { ok: true });
  await write('site2-private/secret.md', 'markdown', 'secret');
  await write('secret.md', 'markdown', 'top secret');
  const folder = await api('GET', `/nodes/by-path?project_id=${projectId}&path=site2`);
  const p = await publish({ node_id: folder.body.data.id });

  const index = await pub(p.publish_key);
  t.is(index.status, 200);
  const doc = new JSDOM(index.body.toString()).window.document;
  const links = [...doc.querySelectorAll('main a')].map((a) => a.getAttribute('href')!);
  t.deepEqual(links.sort(), [`/api/v1/p/${p.publish_key}/data.json`, `/api/v1/p/${p.publish_key}/guide`, `/api/v1/p/${p.publish_key}/index.md`]);
  for (const link of links) t.is((await rawGet(link)).status, 200, link);

  const sub = await pub(p.publish_key, '/guide');
  const subLinks = [...new JSDOM(sub.body.toString()).window.document.querySelectorAll('main a')].map((a) => a.getAttribute('href'));
  t.deepEqual(subLinks, [`/api/v1/p/${p.publish_key}`, `/api/v1/p/${p.publish_key}/guide/intro.md`], 'up, then the child');
  const intro = await pub(p.publish_key, '/guide/intro.md');
  t.is(new JSDOM(intro.body.toString()).window.document.querySelector('h1')?.textContent, 'Intro');
  t.deepEqual(JSON.parse((await pub(p.publish_key, '/data.json?pointer=/ok')).body.toString()), true);

  const tree = JSON.parse((await pub(p.publish_key, '?format=json')).body.toString());
  t.is(tree.truncated, false);
  t.deepEqual(tree.children.map((n: { path: string }) => n.path), ['guide', 'data.json', 'index.md']);
  t.is(tree.children[0].children[0].url, `/api/v1/p/${p.publish_key}/guide/intro.md`);

  const notFound = (await pub('pk_nothing-here')).body.toString();
  for (const escape of ['/..', '/../secret.md', '/%2e%2e/secret.md', '/guide/..%2F..%2Fsecret.md', '/%2E%2E%2Fsecret.md', '/..%5csecret.md', '/./index.md', '//index.md', '/guide/%00', '/%E0%A4%A', '/missing.md', '/index.md/x']) {
    const res = await pub(p.publish_key, escape);
    t.is(res.status, 404, escape);
    t.is(res.body.toString(), notFound, `${escape}: the same 404 as an unknown key`);
  }
  t.is((await rawGet(`/api/v1/p/${p.publish_key}-private/secret.md`)).status, 404);
  const single = await publish({ node_id: (await write('lonely.md', 'markdown', 'x')).id });
  t.is((await pub(single.publish_key, '/secret.md')).status, 404, 'a published file has nothing beneath it');
});

test('version pin serves that version; ETag and Cache-Control; 304 on If-None-Match', async (t) => {
  const node = await write('pinned/doc.md', 'markdown', '# First');
  await write('pinned/doc.md', 'markdown', '# Second');
  const pinned = await publish({ node_id: node.id, version: 1 });
  const latest = await publish({ node_id: node.id });
  const h1 = (r: { body: Buffer }) => new JSDOM(r.body.toString()).window.document.querySelector('h1')?.textContent;
  const a = await pub(pinned.publish_key);
  const b = await pub(latest.publish_key);
  t.is(h1(a), 'First');
  t.is(h1(b), 'Second');
  t.is(a.headers['cache-control'], 'public, max-age=3600', 'a pinned version does not change');
  t.is(b.headers['cache-control'], 'public, max-age=60');
  t.is((await pub(pinned.publish_key, '?format=md')).body.toString(), '# First');

  const etag = String(b.headers.etag);
  const again = await pub(latest.publish_key, '', { 'if-none-match': etag });
  t.is(again.status, 304);
  t.is(again.body.length, 0);
  t.not((await pub(latest.publish_key, '?format=md')).headers.etag, etag, 'the format is part of the ETag');
  await write('pinned/doc.md', 'markdown', '# Third');
  const changed = await pub(latest.publish_key, '', { 'if-none-match': etag });
  t.is(changed.status, 200, 'a new version is a new ETag');
  t.is(h1(changed), 'Third');
  t.is(h1(await pub(pinned.publish_key)), 'First');

  const unpinned = await api('PATCH', `/publishes/${pinned.id}`, { version: null });
  t.is(unpinned.body.data.version, null);
  t.is(h1(await pub(pinned.publish_key)), 'Third');
  t.is((await api('PATCH', `/publishes/${pinned.id}`, { version: 9 })).status, 422, 'a version that does not exist');
  t.is((await api('PATCH', `/publishes/${pinned.id}`, { version: 2 })).body.data.version, 2);
  t.is(h1(await pub(pinned.publish_key)), 'Second');
  const folder = await api('GET', `/nodes/by-path?project_id=${projectId}&path=pinned`);
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: folder.body.data.id, version: 1 })).status, 422, 'folders are not pinned');
});

test('a disabled, expired or deleted publish, a trashed or purged node, an unknown key: the same 404', async (t) => {
  const bodies = new Set<string>();
  const gone = async (key: string, what: string) => {
    const res = await pub(key);
    t.is(res.status, 404, what);
    bodies.add(res.body.toString());
  };
  await gone('pk_unknown', 'unknown key');

  const disabled = await publish({ node_id: (await write('gone/disabled.md', 'markdown', 'd')).id });
  t.is((await pub(disabled.publish_key)).status, 200);
  await api('PATCH', `/publishes/${disabled.id}`, { enabled: false });
  await gone(disabled.publish_key, 'disabled');
  await api('PATCH', `/publishes/${disabled.id}`, { enabled: true });
  t.is((await pub(disabled.publish_key)).status, 200, 'enabled again');

  // Served first, then given an expiry a moment away: no race between a busy machine and the clock.
  const expiring = await publish({ node_id: (await write('gone/expiring.md', 'markdown', 'e')).id, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  t.is((await pub(expiring.publish_key)).status, 200);
  t.is((await api('PATCH', `/publishes/${expiring.id}`, { expires_at: new Date(Date.now() + 3000).toISOString() })).status, 200);
  const deadline = Date.now() + 30_000;
  while ((await pub(expiring.publish_key)).status === 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await gone(expiring.publish_key, 'expired');
  t.is((await api('GET', `/publishes/${expiring.id}`)).body.data.status, 'expired');

  const deleted = await publish({ node_id: (await write('gone/deleted.md', 'markdown', 'x')).id });
  await api('DELETE', `/publishes/${deleted.id}`);
  await gone(deleted.publish_key, 'deleted publish');

  const trashed = await publish({ node_id: (await write('gone/trashed.md', 'markdown', 't')).id });
  await c('POST', '/rm', { path: 'gone/trashed.md' });
  await gone(trashed.publish_key, 'node in the trash');
  t.is((await api('GET', `/publishes/${trashed.id}`)).body.data.status, 'node_trashed');

  const purged = await publish({ node_id: (await write('gone/purged.md', 'markdown', 'p')).id });
  await c('POST', '/rm', { path: 'gone/purged.md', permanent: true });
  await gone(purged.publish_key, 'node deleted permanently');
  t.is((await api('GET', `/publishes/${purged.id}`)).body.data.status, 'node_deleted');

  t.is(bodies.size, 1, `one body for every case: ${[...bodies].join(' | ')}`);
  t.false([...bodies][0]!.includes('gone/'), 'no path revealed');
});

test('slugs are unique per server (409) and are a second public address', async (t) => {
  const node = await write('slug/page.md', 'markdown', '# Slugged');
  const p = await publish({ node_id: node.id, slug: 'release-notes' });
  const res = await api('POST', '/publishes/', { project_id: projectId, node_id: node.id, slug: 'release-notes' });
  t.is(res.status, 409);
  t.is((await api('POST', '/publishes/', { project_id: projectId, node_id: node.id, slug: 'Not A Slug' })).status, 422);
  const other = await publish({ node_id: node.id });
  t.is((await api('PATCH', `/publishes/${other.id}`, { slug: 'release-notes' })).status, 409);
  t.is((await pub('release-notes')).status, 200);
  t.is((await pub(p.publish_key)).status, 200);
  await api('PATCH', `/publishes/${p.id}`, { slug: null });
  t.is((await pub('release-notes')).status, 404);
  t.is((await api('PATCH', `/publishes/${other.id}`, { slug: 'release-notes' })).status, 200, 'a freed slug can be taken');
});
