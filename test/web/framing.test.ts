import anyTest, { type TestFn } from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DASHBOARD_CSP } from '../../src/http/middleware/dashboardPolicy.ts';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, openNewProject, treeItem } from '../helpers/dashboard.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * The dashboard's Content-Security-Policy (issue 28 point 3): no site may frame it, scripts
 * come from the service only; and the dashboard still works under it in chromium (every
 * dashboard test also fails on a CSP violation: see freshPageEachTest).
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite));

/** The directives of a Content-Security-Policy header, by name. */
function directives(csp: string | null): Map<string, string[]> {
  return new Map((csp ?? '').split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!, values]));
}

test('dashboard pages forbid framing and allow scripts from the service only; other pages keep their own policy', async (t) => {
  for (const path of ['/', '/projects/prj_x']) {
    const res = await fetch(server.url + path, { headers: { accept: 'text/html' } });
    t.is(res.status, 200);
    t.is(res.headers.get('x-frame-options'), 'DENY', path);
    const csp = directives(res.headers.get('content-security-policy'));
    t.deepEqual(csp.get('frame-ancestors'), ["'none'"], path);
    t.deepEqual(csp.get('script-src'), ["'self'"], path);
    t.deepEqual(csp.get('object-src'), ["'none'"], path);
    t.deepEqual(csp.get('base-uri'), ["'none'"], path);
  }
  // The built page holds no inline script the policy would block.
  const html = await (await fetch(server.url + '/', { headers: { accept: 'text/html' } })).text();
  t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/);
  // Published pages and the API reference are not dashboard pages: their own policies stand.
  const docs = await fetch(`${server.url}/docs/`);
  t.is(docs.status, 200);
  t.truthy(docs.headers.get('content-security-policy'));
  t.not(docs.headers.get('content-security-policy'), DASHBOARD_CSP);
});

test('signed in under the policy, the dashboard creates and renders a document with no violation; an injected inline script is refused', async (t) => {
  const { page, cspViolations } = t.context;
  await openNewProject(server, page, admin.token, orgId, 'Policy project');
  await page.getByRole('combobox', { name: /^New/ }).selectOption('markdown');
  await page.getByLabel(/^Name/).fill('notes');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await treeItem(page, 'notes.md', 'markdown').waitFor();
  await page.getByLabel('Markdown source').fill('# Under policy\n\nSome *text*.\n');
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('heading', { name: 'Under policy' }).waitFor();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved as version 2.').waitFor();
  t.deepEqual(cspViolations, [], 'the dashboard runs under its policy');

  // The policy is really enforced: a script injected into the page does not run, and is reported.
  const refused = await page.evaluate(`new Promise((resolve) => {
    document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
    setTimeout(() => resolve(window.injected === 1 ? 'ran' : 'no report'), 5000); // a deadline: the report comes at once
    const s = document.createElement('script');
    s.textContent = 'window.injected = 1';
    document.body.append(s);
  })`);
  t.is(refused, 'script-src-elem');
  t.is(await page.evaluate('window.injected'), undefined);
  const deadline = Date.now() + 5000;
  while (!cspViolations.some((v) => /script-src/.test(v)) && Date.now() < deadline) await page.waitForTimeout(20);
  t.true(cspViolations.some((v) => /script-src/.test(v)), cspViolations.join('\n'));
  cspViolations.length = 0;
});

test('another site cannot frame the dashboard', async (t) => {
  const { page, cspViolations } = t.context;
  // A page of another origin that frames the dashboard.
  const other: Server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><iframe id="victim" src="${server.url}/"></iframe>`);
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  try {
    await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    const frame = await (await page.waitForSelector('#victim')).contentFrame();
    await frame!.waitForLoadState();
    // The frame shows chromium's error page, not the dashboard.
    t.is(await frame!.locator('#app').count(), 0);
    t.false(frame!.url().startsWith(server.url), frame!.url());
    const deadline = Date.now() + 5000;
    while (!cspViolations.some((v) => /frame-ancestors/.test(v)) && Date.now() < deadline) await page.waitForTimeout(20);
    t.true(cspViolations.some((v) => /frame-ancestors/.test(v)), cspViolations.join('\n'));
    cspViolations.length = 0;
  } finally {
    await new Promise((r) => other.close(r));
  }
});
