import test from 'ava';
import { apiRoutes } from '../../src/app/routes.ts';
import { authorizationKind, type RouteDeclaration } from '../../src/http/routes/declaration.ts';
import { createOrg, createProject } from '../api/fixtures.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The whole route table, as the service mounts it: every route enforces a declared check (the
// mount refuses to start otherwise), and the few that check no organization, project or node are
// listed here, each with the reason its declaration gives. A route added to this list is a
// decision someone made on purpose.

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

const table = () => {
  const source = apiRoutes(server.services);
  return source.groups.flatMap((g) => g.routes.map((r) => ({ g, r, at: `${r.method.toUpperCase()} ${g.server ? '' : ''}${g.prefix}${r.path}` })));
};

const reasonOf = (r: RouteDeclaration) => Object.values(r.authorize)[0] as string;

test('every route declares a check the mount enforces', (t) => {
  const routes = table();
  t.true(routes.length > 200, `the whole table (${routes.length} routes)`);
  t.deepEqual(
    routes.filter(({ r }) => !r.authorize || !authorizationKind(r.authorize)).map(({ at }) => at),
    [],
  );
});

test('the routes that check no organization, project or node are these, each saying why', (t) => {
  const unchecked = table()
    .filter(({ r }) => ['public', 'signedIn', 'user', 'admin', 'checkedBy'].includes(authorizationKind(r.authorize)))
    .map(({ r, at }) => {
      t.true(reasonOf(r).length > 20, `${at} says why`);
      return `${authorizationKind(r.authorize)} ${at}`;
    })
    .sort();
  t.deepEqual(unchecked, [
    // The service's administrators (users.is_admin): nothing of any organization or project.
    'admin GET /cluster/',
    'admin POST /cluster/moves',
    'admin POST /cluster/nodes/:id/drain',
    // The domain method named in the declaration decides: no single project is known before it runs.
    'checkedBy GET /chat/sessions/',
    'checkedBy GET /nodes/batch',
    'checkedBy GET /tables/',
    'checkedBy GET /tools/',
    'checkedBy POST /ingest/tasks/batch',
    'checkedBy POST /sandbox-endpoints/:endpoint_id/exec',
    'checkedBy POST /tools/',
    'checkedBy POST /tools/search',
    // No credential.
    'public GET /api/v1/p/:key',
    'public GET /api/v1/p/:key/*path',
    'public GET /auth/config',
    'public GET /healthz',
    'public GET /nodes/download/:token',
    'public GET /oauth/callback',
    'public POST /auth/login',
    'public POST /auth/logout',
    'public POST /auth/refresh',
    'public POST /auth/signup',
    'public POST /sync/webhooks/:syncId',
    'public PUT /nodes/upload/:token',
    // Any caller, nothing of any project.
    'signedIn GET /auth/me',
    'signedIn GET /ingest/health',
    'signedIn GET /projects/',
    'signedIn GET /sync/connectors',
    'signedIn GET /tools/types',
    // A user's own account.
    'user GET /organizations/',
    'user GET /profile/me',
    'user GET /profile/onboarding/status',
    'user POST /auth/initialize',
    'user POST /oauth/:provider/callback',
    'user POST /organizations/',
    'user POST /organizations/invitations/:token/accept',
    'user POST /profile/onboarding/complete',
    'user POST /profile/onboarding/reset',
  ]);
});

test('every route that is not public answers 401 without a credential, before reading its input', async (t) => {
  const fill = (path: string) => path.replace(/:[a-zA-Z_]+/g, 'x1').replace('*path', 'x1');
  for (const { g, r, at } of table()) {
    if ('public' in r.authorize) continue;
    const url = `${server.url}${g.server ? '' : '/api/v1'}${fill(g.prefix + r.path)}`;
    const res = await fetch(url, { method: r.method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: r.method === 'get' ? undefined : '{}' });
    // MCP servers are reached through a gate that knows its endpoints: an unknown one is 404 before any credential is asked.
    const gated = g.prefix === '/mcp/e' || g.prefix === '/mcp/a';
    t.is(res.status, gated ? 404 : 401, at);
  }
});

test("a stranger's requests on another project's organization, project and nodes are refused by the declared check", async (t) => {
  const admin = await server.login();
  const stranger = await server.createUser('stranger@example.com');
  const orgId = await createOrg(server, admin.token);
  const projectId = await createProject(server, admin.token, orgId);
  const written = await server.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'a.md', node_type: 'markdown', content: 'a' } });
  const nodeId = written.body.data.id as string;
  const ids: Record<string, string> = { org_id: orgId, project_id: projectId, projectId, node_id: nodeId, id: nodeId };
  let checked = 0;
  for (const { g, r, at } of table()) {
    const kind = authorizationKind(r.authorize);
    // Routes whose check reads only the path and query: the stranger sends real ids of the admin's things.
    if (!['org', 'project', 'content', 'node'].includes(kind) || r.method !== 'get' || g.server) continue;
    const path = (g.prefix + r.path).replace(/:([a-zA-Z_]+)/g, (_, name: string) => ids[name] ?? 'x1').replace('*path', 'a.md');
    const query = new URLSearchParams({ project_id: projectId, org_id: orgId, node_id: nodeId, path: 'a.md' });
    const res = await server.api('GET', `${path}?${query}`, { token: stranger.token });
    if (res.status === 422) continue; // the route needs input this generic request does not give
    t.true(res.status === 404 || res.status === 403, `${at}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    checked++;
  }
  t.true(checked >= 30, `${checked} routes refused the stranger`);
});
