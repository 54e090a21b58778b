import test from 'ava';
import Router from '@koa/router';
import { API_PREFIX, apiRouter } from '../../src/app/routes.ts';
import { indexBySegment } from '../../src/http/routes/segmentIndex.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The API router tests only the layers whose first segment can match a request
// (src/http/routes/segmentIndex.ts). It must match exactly what the router's own match over every
// layer matches: the same layers, in the same order, for any path and method.

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Whether the indexed match finds the very layers the router's own match over every layer finds, in order. */
function sameMatch(router: Router, path: string, method: string): boolean {
  const indexed = router.match(path, method);
  const full = Router.prototype.match.call(router, path, method);
  const same = <T>(a: T[], b: T[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  return indexed.route === full.route && same(indexed.path, full.path) && same(indexed.pathAndMethod, full.pathAndMethod);
}

/** A request path for a layer's pattern: parameters filled in, optional parts kept or dropped. */
function samples(pattern: string): string[] {
  const fill = (p: string) => p.replace(/:(\w+)/g, 'x1').replace(/\*(\w+)/g, 'a/b.md');
  const kept = fill(pattern.replace(/[{}]/g, ''));
  const dropped = fill(pattern.replace(/\{[^}]*\}/g, ''));
  return [...new Set([kept, dropped, kept.toUpperCase(), `${kept}/`, `${kept}/extra`])];
}

test('a small router: literal, parameter-first and wildcard layers match as without the index', (t) => {
  const router = new Router({ prefix: '/api/v1' });
  const ok = () => undefined;
  router.get('/content/:projectId/cat', ok);
  router.get('/:anything/cat', ok);
  router.get('/nodes/*rest', ok);
  router.post('/nodes/bulk', ok);
  router.get('/openapi.json', ok);
  router.get('/', ok);
  router.get('/things{/:id}', ok);
  router.get('/keys', ok);
  router.get('/sync', ok);
  indexBySegment(router, '/api/v1');
  const paths = [
    '/api/v1/content/p1/cat', '/API/V1/Content/p1/cat', '/api/v1/content/p1/cat/', '/api/v1/x/cat', '/api/v1/nodes/a/b',
    '/api/v1/nodes/bulk', '/api/v1/nodes', '/api/v1/openapi.json', '/api/v1', '/api/v1/', '/api/v1//cat', '/api/v1/%63ontent/p1/cat',
    '/api/v1/things', '/api/v1/things/7', '/elsewhere/content/p1/cat', '/', '', '/api/v1/\u212Aeys', '/api/v1/\u017Fync',
  ];
  for (const path of paths) for (const method of METHODS) t.true(sameMatch(router, path, method), `${method} ${path}`);
  // The index is not vacuous: these match something.
  t.true(router.match('/api/v1/content/p1/cat', 'GET').route);
  t.true(router.match('/API/V1/Content/p1/cat', 'GET').route);
  t.true(router.match('/api/v1/x/cat', 'GET').route);
});

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('the whole API: every route, by every method, in several spellings, matches the same layers', (t) => {
  const { router } = apiRouter(server.services);
  const paths = new Set<string>([`${API_PREFIX}`, `${API_PREFIX}/`, '/healthz', `${API_PREFIX}/unknown/x`]);
  for (const layer of router.stack) if (typeof layer.path === 'string') for (const p of samples(layer.path)) paths.add(p);
  t.true(paths.size > 500, `${paths.size} paths`);
  const differing = [...paths].flatMap((path) => METHODS.filter((m) => !sameMatch(router, path, m)).map((m) => `${m} ${path}`));
  t.deepEqual(differing, []);
  // And it is what makes a content read cheap: a few of the ~235 layers are tried, not all.
  let tried = 0;
  for (const layer of router.stack) {
    const own = layer.match.bind(layer);
    layer.match = (path) => (tried++, own(path));
  }
  t.true(router.match(`${API_PREFIX}/content/p1/cat`, 'GET').route);
  t.true(tried > 0 && tried < router.stack.length / 4, `${tried} of ${router.stack.length} layers tried`);
});
