import anyTest, { type TestFn } from 'ava';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, openNewProject } from '../helpers/dashboard.ts';
import type { TestServer } from '../helpers/server.ts';
import { Receiver } from '../webhooks/receiver.ts';

/**
 * The settings panel's webhooks (issue 33) in headless chromium: create one (its secret shown
 * once), see its recent deliveries, ping it, delete it. Checked against a real receiver and the API.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => {
  ({ server, admin, orgId } = suite);
  // The operator allows loopback receivers (CNS_URL_FETCH_ALLOW_PRIVATE), read at each use.
  server.services.settings.urlFetchAllowPrivate = true;
});

test('the settings list webhooks with their recent deliveries; create, ping and delete work', async (t) => {
  const { page } = t.context;
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Hooks project');
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 3 }).waitFor();
  await page.getByText('No webhooks yet.').waitFor();

  await page.getByLabel('Webhook URL').fill(r.url);
  await page.getByLabel('Only beneath folder').fill('/notes/');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const once = page.getByRole('group', { name: `Secret of the webhook to ${r.url}` });
  await once.waitFor();
  const secret = (await once.locator('code.secret').textContent())!;
  t.true(secret.length >= 32);
  const [hook] = (await server.api('GET', `/projects/${projectId}/webhooks`, { token: admin.token })).body.data.webhooks;
  t.is(hook.url, r.url);
  t.is(hook.path_prefix, 'notes');
  await once.getByRole('button', { name: 'Done' }).click();

  // A change is delivered; after a ping the list shows both deliveries.
  t.is((await server.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'notes/a.md', content: 'x', node_type: 'markdown' } })).status, 201);
  await r.waitFor(() => r.of('content.created').length >= 1);
  await page.getByRole('button', { name: `Ping ${r.url}` }).click();
  await page.getByRole('status').getByText(`Ping to ${r.url} delivered (200).`).waitFor();
  const recent = page.getByRole('list', { name: `Recent deliveries to ${r.url}` });
  await recent.getByText(/^ping: delivered \(200\), 1 attempt/).waitFor();
  await recent.getByText(/^content\.created: delivered \(200\), 1 attempt/).waitFor();
  t.is(r.of('ping').length, 1);

  await page.getByRole('button', { name: `Delete the webhook to ${r.url}` }).click();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByText('No webhooks yet.').waitFor();
  t.is((await server.api('GET', `/projects/${projectId}/webhooks`, { token: admin.token })).body.data.total, 0);
});
