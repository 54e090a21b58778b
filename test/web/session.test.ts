import anyTest, { type TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { freshPageEachTest, launchBrowser, type PageContext } from '../helpers/browser.ts';
import { signIn as signInAs } from '../helpers/dashboard.ts';
import { cookiesOf, spoilAccessCookie, storedSession } from '../helpers/sessionCookie.ts';
import { createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { metadataCount } from '../helpers/metadata.ts';
import { sql } from 'kysely';

/**
 * The dashboard's cookie session in headless chromium: the tokens live in HttpOnly cookies the
 * page cannot read, a reload keeps the session, sign-out ends it, and tabs sharing the cookies
 * never trip over each other's refresh.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let browser: Browser;

test.before(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
});
test.after.always(async () => {
  await browser?.close();
  await server?.stop();
});

freshPageEachTest(test, () => browser);

/** A user of each test's own, so their sessions and revocations cannot mix. */
async function newUser(name: string): Promise<{ email: string; password: string; id: string }> {
  const email = `${name}@example.com`;
  const password = `${name}-password-1`;
  const user = await server.services.users.create({ email, password });
  return { email, password, id: user.id };
}

const revokedSignIns = (userId: string) => metadataCount(server, sql`SELECT COUNT(*) AS n FROM refresh_tokens WHERE user_id = ${userId} AND revoked_at IS NOT NULL`);

test('a reload keeps the user signed in, in the project that was open', async (t) => {
  const { page } = t.context;
  const u = await newUser('reload');
  const token = (await server.login(u.email, u.password)).token;
  const { orgId } = await defaultProject(server, token);
  await createProject(server, token, orgId, 'Reload project');
  await signInAs(server, page, u.email, u.password);
  await page.getByRole('button', { name: 'Reload project', exact: true }).click();
  await page.getByRole('heading', { name: 'Reload project', level: 1 }).waitFor();

  const me = page.waitForResponse('**/api/v1/auth/me');
  await page.reload();
  t.is((await me).status(), 200, 'the page asked who is signed in');
  await page.getByRole('heading', { name: 'Reload project', level: 1 }).waitFor();
  t.is(await page.getByRole('button', { name: 'Sign in' }).count(), 0);
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  t.pass('the live feed connected with the cookie');
});

test('the page cannot read the session tokens: document.cookie holds only the CSRF token', async (t) => {
  const { page, context } = t.context;
  const u = await newUser('xss');
  await signInAs(server, page, u.email, u.password);
  await storedSession(context);
  const cookies = await context.cookies();
  const access = cookies.find((c) => c.name === 'cns_access')!;
  const refresh = cookies.find((c) => c.name === 'cns_refresh')!;
  t.true(access.httpOnly && refresh.httpOnly);
  t.is(access.sameSite, 'Strict');

  // Page-side code as strings: the root tsconfig has no DOM types (the tests run in Node).
  const visible = (await page.evaluate('document.cookie + JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')) as string;
  t.false(visible.includes(access.value), 'the access token is not readable by scripts');
  t.false(visible.includes(refresh.value), 'the refresh token is not readable by scripts');
  t.regex(visible, /cns_csrf=/);
  t.notRegex(visible, /cns_access|cns_refresh/);
});

test('sign out, then a reload, shows the sign-in form, and the old access cookie no longer works', async (t) => {
  const { page, context } = t.context;
  const u = await newUser('signout');
  await signInAs(server, page, u.email, u.password);
  const old = await storedSession(context);
  t.is((await server.api('GET', '/auth/me', { headers: { cookie: `cns_access=${old.cns_access}` } })).status, 200);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  t.deepEqual(Object.keys(await cookiesOf(context)), [], 'the cookies are gone');
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  t.is(await page.getByRole('heading', { name: 'Projects' }).count(), 0);

  const replay = await server.api('GET', '/auth/me', { headers: { cookie: `cns_access=${old.cns_access}` } });
  t.is(replay.status, 401, 'signing out revoked the session, not only the cookies');
  t.is(await revokedSignIns(u.id), 1);
});

test('two tabs restoring an expired session at once share one refresh and both stay signed in', async (t) => {
  const { page, context } = t.context;
  const u = await newUser('tabs');
  await signInAs(server, page, u.email, u.password);
  // The tab is closed, and its access cookie goes bad meanwhile; the refresh cookie still stands.
  await page.close();
  await spoilAccessCookie(context, server.url);
  const tabs = await Promise.all([context.newPage(), context.newPage()]);
  const refreshes: number[] = [];
  for (const tab of tabs) {
    tab.on('pageerror', (e) => t.context.errors.push(e.message));
    tab.on('response', (r) => {
      if (r.url().endsWith('/api/v1/auth/refresh')) refreshes.push(r.status());
    });
  }

  await Promise.all(tabs.map((tab) => tab.goto(server.url)));
  await Promise.all(tabs.map((tab) => tab.getByRole('heading', { name: 'Projects' }).waitFor()));
  // A second refresh with the same cookie would have been taken for a stolen token and signed both out.
  t.deepEqual(refreshes, [200], 'one tab refreshed; the other waited for it and adopted the new cookies');
  t.is(await revokedSignIns(u.id), 0);
  t.not((await cookiesOf(context)).cns_access, 'expired');
});

test('the access token is refreshed before it expires, without a refused request', async (t) => {
  const { context } = t.context;
  const shortLived = await startTestServer({ accessTokenTtlSeconds: 3 });
  t.teardown(() => shortLived.stop());
  const page = await context.newPage();
  page.on('pageerror', (e) => t.context.errors.push(e.message));
  const refused: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 401) refused.push(r.url());
  });
  // Waited on from the start: the first refresh is due 2.4 s after signing in.
  const refresh = page.waitForResponse('**/api/v1/auth/refresh', { timeout: 15_000 });
  await signInAs(shortLived, page);
  t.is((await refresh).status(), 200);
  t.deepEqual(refused, [], 'refreshed ahead of expiry, not after a 401');
  const rotated = await metadataCount(shortLived, sql`SELECT COUNT(*) AS n FROM refresh_tokens WHERE rotated_at IS NOT NULL`);
  t.true(rotated >= 1, 'the refresh cookie was rotated');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
});
