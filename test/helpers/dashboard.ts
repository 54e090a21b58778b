import type { Page } from 'playwright-core';
import { createProject } from './project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type TestServer } from './server.ts';

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
