import type { TestFn } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { freshPageEachTest, launchBrowser, type PageContext } from './browser.ts';
import { createProject, defaultProject } from './project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from './server.ts';

/** What a dashboard test file works with: a real server, its administrator and default organization. */
export interface DashboardSuite {
  server: TestServer;
  admin: { token: string };
  orgId: string;
}

/**
 * The hooks every dashboard test file registers: a server and chromium started together before
 * its tests (the administrator signed in through the API), both stopped after, and a fresh page
 * per test (see `freshPageEachTest`). `ready` receives the suite once it is up.
 */
export function dashboardSuite(test: TestFn<PageContext>, ready: (suite: DashboardSuite) => void, options: { permissions?: string[] } = {}): void {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  test.before(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
    const admin = await server.login();
    ready({ server, admin, orgId: (await defaultProject(server, admin.token)).orgId });
  });
  test.after.always(async () => {
    await browser?.close();
    await server?.stop();
  });
  freshPageEachTest(test, () => browser!, options);
}

/** Steps the dashboard's browser tests share: each goes through the UI as a user would. */
export async function signIn(server: TestServer, page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<void> {
  await page.goto(server.url);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}

/** A fresh project (made through the API as the admin), opened in the dashboard with its live feed connected. */
export async function openNewProject(server: TestServer, page: Page, adminToken: string, orgId: string, name: string): Promise<string> {
  const projectId = await createProject(server, adminToken, orgId, name);
  await signIn(server, page);
  await page.getByRole('button', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  return projectId;
}

/** A row of the file tree, by the name a screen reader reads: `name (type)`. */
export const treeItem = (page: Page, name: string, type: string) => page.getByRole('button', { name: `${name} (${type})`, exact: true });

/**
 * Clicks one of the workspace header's actions (Project history, Chat, Trash, Settings, …) by
 * name: on a phone-wide screen they are in the header's menu, which is opened first.
 */
export async function clickHeaderAction(page: Page, name: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu', exact: true });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await page.locator('#workspace-menu').getByRole('button', { name, exact: true }).click();
}
