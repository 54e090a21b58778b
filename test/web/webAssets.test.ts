import test from 'ava';
import { ensureWebBuilt } from '../../scripts/build-web.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
test.before(async () => {
  await ensureWebBuilt();
  server = await startTestServer();
});
test.after.always(() => server?.stop());

const get = (path: string, accept = 'text/html') => fetch(server.url + path, { headers: { accept } });

test('the dashboard is served at / with index.html not cached and hashed assets immutable', async (t) => {
  const index = await get('/');
  t.is(index.status, 200);
  t.is(index.headers.get('cache-control'), 'no-cache');
  t.regex(index.headers.get('content-type') ?? '', /text\/html/);
  const html = await index.text();
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  t.truthy(asset, html);
  const js = await get(asset!, '*/*');
  t.is(js.status, 200);
  t.is(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.regex(js.headers.get('content-type') ?? '', /javascript/);
  const head = await fetch(server.url + asset!, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), js.headers.get('content-length'));
});

test('client routes get index.html; the service paths are never shadowed', async (t) => {
  const route = await get('/projects/prj_x');
  t.is(route.status, 200);
  t.is(route.headers.get('cache-control'), 'no-cache');
  t.regex(await route.text(), /<div id="app">/);
  // A favicon, linked from the page.
  t.regex(await (await get('/')).text(), /<link rel="icon" href="\/favicon\.svg"/);
  const icon = await get('/favicon.svg', 'image/*');
  t.is(icon.status, 200);
  t.regex(icon.headers.get('content-type') ?? '', /image\/svg\+xml/);
  // Deep links to nodes, whose paths end in a file name, get it too.
  const deep = await get('/projects/prj_x/files/docs/guide.md?tab=blame');
  t.is(deep.status, 200);
  t.regex(await deep.text(), /<div id="app">/);
  t.is((await get('/missing.md')).status, 404, 'outside /projects/ a name with an extension is a missing file');

  // Unknown API paths stay the API's (its envelope, here the 401 of an anonymous caller).
  const api = await get('/api/v1/nope');
  t.is(api.status, 401);
  t.is(((await api.json()) as { code: string }).code, 'UNAUTHORIZED');
  t.is((await get('/api/v1/projects')).status, 401);
  t.is((await get('/healthz', 'application/json')).status, 200);
  t.regex(await (await get('/docs/')).text(), /swagger/i);
  t.not((await get('/git/prj_x.git/info/refs')).headers.get('cache-control'), 'no-cache');
  // A cluster node's `git fetch` from another (Accept: */*) must reach its git endpoint, never the dashboard.
  t.not((await get('/internal/git/prj_x.git/info/refs?service=git-upload-pack', '*/*')).headers.get('cache-control'), 'no-cache');
  t.not(await (await get('/api/v1/p/nope')).text(), await (await get('/')).text());

  // A missing built file is a 404, not index.html; a path out of the build folder is refused.
  t.is((await get('/assets/missing-abc.js', '*/*')).status, 404);
  t.is((await get('/..%2f..%2fpackage.json', '*/*')).status, 404);
  // Only GET and HEAD are static (and public): anything else goes through the credential check.
  t.is((await fetch(server.url + '/', { method: 'POST' })).status, 401);
});

test('hashed assets are sent precompressed (brotli, else gzip) to clients that take it', async (t) => {
  const html = await (await get('/')).text();
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  const plain = await get(asset, '*/*');
  const body = await plain.text();
  for (const [acceptEncoding, encoding] of [['br, gzip', 'br'], ['gzip', 'gzip'], ['identity', null]] as const) {
    const res = await fetch(server.url + asset, { headers: { 'accept-encoding': acceptEncoding } });
    t.is(res.headers.get('content-encoding'), encoding, acceptEncoding);
    t.regex(res.headers.get('vary') ?? '', /Accept-Encoding/);
    t.is(await res.text(), body, 'the same bytes once decoded');
  }
});
