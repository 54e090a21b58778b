import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, signIn, treeItem } from '../helpers/dashboard.ts';
import { createProject } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * Every view of the dashboard has an address: loaded directly (a link, a bookmark), reached by
 * clicking, kept by a reload, walked with back and forward; an address the viewer may not see
 * says "not found or no access", whether or not the thing exists. In headless chromium.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
let projectId: string;
let content: Promise<void>;
dashboardSuite(test, (suite) => {
  ({ server, admin, orgId } = suite);
  content = linkedProject();
});

const write = (body: Record<string, unknown>) => server.api('POST', `/content/${projectId}/write`, { token: admin.token, body });

/** The project every test links into (made once the suite's server is up; each test awaits it). */
async function linkedProject(): Promise<void> {
  projectId = await createProject(server, admin.token, orgId, 'Linked project');
  await write({ path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nfirst\n', message: 'first' });
  await write({ path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nsecond\n', message: 'second' });
  await write({ path: 'docs/data.json', node_type: 'json', content: { a: 1 } });
}
test.beforeEach(() => content);

const at = (page: Page) => {
  const u = new URL(page.url());
  return decodeURIComponent(u.pathname + u.search);
};
const base = () => `/projects/${projectId}`;

/** Each kind of address, and what shows that it loaded. */
const views: [string, string, (page: Page) => Promise<void>][] = [
  ['project', '', (p) => p.getByText('Choose a file or folder in the tree.').waitFor()],
  ['folder', '/files/docs', (p) => p.getByRole('heading', { name: 'docs', level: 2 }).waitFor()],
  ['file', '/files/docs/guide.md', async (p) => {
    await p.getByRole('heading', { name: 'docs/guide.md', level: 2 }).waitFor();
    await p.getByLabel('Markdown source').waitFor();
  }],
  ['file at a version', '/files/docs/guide.md?version=1', (p) => p.getByRole('region', { name: 'Version 1' }).getByText('first', { exact: true }).waitFor()],
  ['diff of two versions', '/files/docs/guide.md?diff=1..2', (p) => p.getByRole('figure', { name: 'Changes from version 1 to version 2' }).getByLabel('Unified diff').waitFor()],
  ['blame', '/files/docs/guide.md?tab=blame', (p) => p.getByRole('region', { name: 'Blame' }).locator('tr[data-line]').first().waitFor()],
  ['node history', '/files/docs/guide.md?tab=history', (p) => p.getByRole('region', { name: 'History' }).waitFor()],
  ['project history', '/history', (p) => p.getByRole('region', { name: 'Project history' }).waitFor()],
  ['trash', '/trash', (p) => p.getByRole('region', { name: 'Trash' }).waitFor()],
  ['settings', '/settings', (p) => p.getByRole('heading', { name: 'Project settings', level: 2 }).waitFor()],
];

test('every kind of address loads directly and again after a reload', async (t) => {
  const { page } = t.context;
  await signIn(server, page);
  for (const [kind, suffix, shown] of views) {
    await page.goto(server.url + base() + suffix);
    await shown(page);
    t.is(at(page), base() + suffix, kind);
    await page.reload();
    await shown(page);
    t.is(at(page), base() + suffix, `${kind} after a reload`);
  }
});

test('clicking through the views writes their addresses; back and forward walk them', async (t) => {
  const { page } = t.context;
  await signIn(server, page);
  await page.getByRole('button', { name: 'Linked project', exact: true }).click();
  await page.getByRole('heading', { name: 'Linked project', level: 1 }).waitFor();
  t.is(at(page), base());
  await treeItem(page, 'docs', 'folder').click();
  await treeItem(page, 'guide.md', 'markdown').click();
  await page.getByRole('heading', { name: 'docs/guide.md', level: 2 }).waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md`);
  await page.getByRole('tab', { name: 'History' }).click();
  t.is(at(page), `${base()}/files/docs/guide.md?tab=history`);
  await page.getByRole('button', { name: 'Show diff' }).click();
  await page.getByRole('figure', { name: 'Changes from version 1 to version 2' }).waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md?diff=1..2`);
  await page.getByRole('button', { name: 'View version 1' }).click();
  await page.getByRole('region', { name: 'Version 1' }).waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md?version=1`);
  // Breadcrumbs lead up to the folder.
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('button', { name: 'docs' }).click();
  await page.getByRole('heading', { name: 'docs', level: 2 }).waitFor();
  t.is(at(page), `${base()}/files/docs`);
  await page.getByRole('button', { name: 'Trash', exact: true }).click();
  await page.getByRole('region', { name: 'Trash' }).waitFor();
  t.is(at(page), `${base()}/trash?path=docs`);

  await page.goBack();
  await page.getByRole('region', { name: 'Trash' }).waitFor({ state: 'detached' });
  t.is(at(page), `${base()}/files/docs`);
  await page.goBack();
  await page.getByRole('region', { name: 'Version 1' }).waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md?version=1`);
  await page.goBack();
  await page.getByRole('figure', { name: 'Changes from version 1 to version 2' }).waitFor();
  await page.goForward();
  await page.getByRole('region', { name: 'Version 1' }).waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md?version=1`);
  await page.getByRole('button', { name: 'Show the current version' }).click();
  await page.getByLabel('Markdown source').waitFor();
  t.is(at(page), `${base()}/files/docs/guide.md`);
});

test('a link opened in another signed-in browser shows the same view', async (t) => {
  const { page } = t.context;
  const link = `${server.url}${base()}/files/docs/guide.md?diff=1..2`;
  const other = await page.context().browser()!.newContext();
  t.teardown(() => other.close());
  const second = await other.newPage();
  await second.goto(link);
  // Signing in on the address keeps it.
  await second.getByLabel('Email').fill('admin@example.com');
  await second.getByLabel('Password').fill('admin-password-1');
  await second.getByRole('button', { name: 'Sign in' }).click();
  await second.getByRole('figure', { name: 'Changes from version 1 to version 2' }).waitFor();
  t.is(at(second), `${base()}/files/docs/guide.md?diff=1..2`);
});

test('an address the viewer may not see says "not found or no access", the same for what exists and what does not', async (t) => {
  const { page } = t.context;
  const stranger = await server.createUser('stranger@example.com');
  await signIn(server, page, stranger.email, 'user-password-1');
  for (const suffix of ['', '/files/docs/guide.md']) {
    await page.goto(server.url + base() + suffix);
    await page.getByRole('heading', { name: 'Not found or no access' }).waitFor();
    t.false((await page.content()).includes('Guide'), 'nothing of the project shows');
  }
  await page.goto(`${server.url}/projects/prj_doesnotexist`);
  await page.getByRole('heading', { name: 'Not found or no access' }).waitFor();
  await page.getByRole('button', { name: '← Projects' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  t.is(at(page), '/');

  // A member: a path that is not there answers the same page inside the project.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Email').waitFor();
  await signIn(server, page);
  await page.goto(`${server.url}${base()}/files/docs/missing.md`);
  await page.getByRole('heading', { name: 'Not found or no access' }).waitFor();
  await page.getByRole('heading', { name: 'Linked project', level: 1 }).waitFor();
});
