import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, openNewProject, signIn, treeItem } from '../helpers/dashboard.ts';
import { createProject } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * The dashboard's search box over the project's search tools, in headless chromium: results with
 * their marked words and heading path open their node in the tree; a project without a search
 * tool is offered one, whose index is followed until it is ready; a viewer's refusal is an alert.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite));

const write = (projectId: string, body: Record<string, unknown>) => server.api('POST', `/content/${projectId}/write`, { token: admin.token, body });

/** A search tool made through the API, and its index polled until ready (or the deadline). */
async function searchToolReady(projectId: string): Promise<string> {
  const created = await server.api('POST', '/tools/search', { token: admin.token, body: { project_id: projectId, name: 'kb search' } });
  if (created.status !== 202) throw new Error(`search tool: ${created.status} ${JSON.stringify(created.body)}`);
  const toolId: string = created.body.data.tool.id;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = (await server.api('GET', `/tools/${toolId}/search-index`, { token: admin.token })).body.data;
    if (state.status === 'ready' && state.documents > 0) return toolId;
    if (Date.now() > deadline) throw new Error(`index not ready: ${JSON.stringify(state)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Buttons, fields and lists of choices without a name a screen reader can read. */
const unnamedControls = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('button, input, select, textarea')]
    .filter((el) => !el.getAttribute('aria-label') && !el.getAttribute('title') && !el.closest('label') && !(el.textContent ?? '').trim())
    .map((el) => el.outerHTML)`);

const searchFor = async (page: Page, words: string) => {
  const box = page.getByRole('search', { name: 'Search the project' });
  await box.getByLabel('Search', { exact: true }).fill(words);
  await box.getByRole('button', { name: 'Search', exact: true }).click();
  return page.getByRole('region', { name: 'Search results' });
};

test('a search shows each result with its marked words and heading path, and the result opens its node in the tree', async (t) => {
  const { page } = t.context;
  const projectId = await createProject(server, admin.token, orgId, 'Search project');
  await write(projectId, { path: 'guides/deep/install.md', node_type: 'markdown', content: '# Guide\n\n## Install\n\nRun the installer on Debian 12, then reboot.\n' });
  await write(projectId, { path: 'notes.md', node_type: 'markdown', content: '# Notes\n\nNothing about that here.\n' });
  await searchToolReady(projectId);

  await signIn(server, page);
  await page.getByRole('button', { name: 'Search project', exact: true }).click();
  const results = await searchFor(page, 'installer debian');
  await results.getByRole('status').filter({ hasText: '1 result for “installer debian”' }).waitFor();
  const hit = results.getByRole('button', { name: 'guides/deep/install.md › Guide > Install' });
  await hit.waitFor();
  const marks = await results.locator('mark').allTextContents();
  t.true(marks.includes('installer') && marks.includes('Debian'), `the matched words are marked: ${JSON.stringify(marks)}`);
  t.false(marks.includes('reboot'));
  t.notRegex((await results.locator('li').textContent()) ?? '', /score/, 'no raw scores');
  t.regex(new URL(page.url()).pathname + new URL(page.url()).search, new RegExp(`^/projects/${projectId}/search\\?q=installer\\+debian$`), 'the address names the search');
  t.deepEqual(await unnamedControls(page), []);
  // A reload runs the search the address names again.
  await page.reload();
  await results.getByRole('status').filter({ hasText: '1 result for “installer debian”' }).waitFor();

  // Keyboard: the result is a button; Enter opens the node, its folders opened on the way in the tree.
  await hit.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'guides/deep/install.md', level: 2 }).waitFor();
  // The tree opens guides/ and guides/deep/ on the way, and marks the node selected.
  await page.getByRole('treeitem', { selected: true }).filter({ has: treeItem(page, 'install.md', 'markdown') }).waitFor();
  t.is(await page.getByRole('treeitem', { expanded: true }).count(), 2);
  t.regex(await page.getByLabel('Markdown source').inputValue(), /Run the installer on Debian 12/);

  const none = await searchFor(page, 'zebra');
  await none.getByText('Nothing found for “zebra”.').waitFor();
  t.is(await none.locator('li').count(), 0);
});

test("a snippet is shown as text: markup in the content is never run, only the server's markers become marks", async (t) => {
  const { page } = t.context;
  const projectId = await createProject(server, admin.token, orgId, 'Snippet project');
  await write(projectId, {
    path: 'odd.md',
    node_type: 'markdown',
    content: 'The quokka <img src="x" onerror="window.__searchPwned = 1"> and <b>bold</b> text.\n',
  });
  await searchToolReady(projectId);
  await signIn(server, page);
  await page.getByRole('button', { name: 'Snippet project', exact: true }).click();
  const results = await searchFor(page, 'quokka');
  await results.getByRole('button', { name: 'odd.md' }).waitFor();
  t.is(await results.locator('img, b').count(), 0, 'no element from the content');
  t.regex((await results.locator('.snippet').textContent()) ?? '', /<img src="x" onerror=/);
  t.deepEqual(await results.locator('mark').allTextContents(), ['quokka']);
  t.is(await page.evaluate('window.__searchPwned'), undefined);
});

test("each result shows its own passage, and Markdown's bold is not taken for a match", async (t) => {
  const { page } = t.context;
  const projectId = await createProject(server, admin.token, orgId, 'Passages project');
  await write(projectId, { path: 'guides/intro.md', node_type: 'markdown', content: '# Introduction\n\nWelcome to the **team handbook**.\n' });
  await write(projectId, { path: 'config/site.json', node_type: 'json', content: { title: 'Handbook', languages: ['en', 'fr'] } });
  await searchToolReady(projectId);
  await signIn(server, page);
  await page.getByRole('button', { name: 'Passages project', exact: true }).click();
  const results = await searchFor(page, 'handbook');
  const intro = results.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'guides/intro.md › Introduction' }) });
  const site = results.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'config/site.json' }) });
  t.is(await intro.locator('.snippet').textContent(), '# Introduction\nWelcome to the **team handbook**.');
  t.deepEqual(await intro.locator('mark').allTextContents(), ['handbook']);
  t.regex((await site.locator('.snippet').textContent()) ?? '', /^\/title: Handbook\n/);
  t.deepEqual(await site.locator('mark').allTextContents(), ['Handbook']);
});

test('without a search tool the box offers one, follows its index until it is ready, then searches', async (t) => {
  const { page } = t.context;
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Fresh search project');
  await write(projectId, { path: 'plan.md', node_type: 'markdown', content: '# Plan\n\nShip the aardvark release.\n' });
  const offer = page.getByRole('button', { name: 'Create a search index' });
  await offer.click();
  await page.getByRole('status').filter({ hasText: /^Index ready: \d+ documents\.$/ }).waitFor();
  const tools = (await server.api('GET', `/tools/by-project/${projectId}`, { token: admin.token })).body.data.tools;
  t.deepEqual(tools.map((x: { type: string }) => x.type), ['search'], 'one search tool was created');
  t.false(await offer.isVisible());

  const results = await searchFor(page, 'aardvark');
  await results.getByRole('button', { name: 'plan.md › Plan' }).click();
  await page.getByRole('heading', { name: 'plan.md', level: 2 }).waitFor();
  t.regex(await page.getByLabel('Markdown source').inputValue(), /aardvark/);
});

test("a viewer's refused search index is an alert, and nothing is created", async (t) => {
  const { page } = t.context;
  const projectId = await createProject(server, admin.token, orgId, 'Viewer search project');
  const viewer = await server.createUser(`viewer-search-${process.pid}@example.com`, 'viewer-password-1');
  const added = await server.api('POST', `/projects/${projectId}/members`, { token: admin.token, body: { user_id: viewer.id, role: 'viewer' } });
  t.true(added.status === 201 || added.status === 200);
  await signIn(server, page, viewer.email, 'viewer-password-1');
  // Not a member of the organization: the project is opened by its address.
  await page.goto(`${server.url}/projects/${projectId}`);
  await page.getByRole('heading', { name: 'Viewer search project', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Create a search index' }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'You may not create a search index in this project' });
  await alert.waitFor();
  t.is((await server.api('GET', `/tools/by-project/${projectId}`, { token: admin.token })).body.data.tools.length, 0);
});

test('search results fit a 390 px wide screen', async (t) => {
  const { page } = t.context;
  await page.setViewportSize({ width: 390, height: 844 });
  const projectId = await createProject(server, admin.token, orgId, 'Narrow search project');
  await write(projectId, {
    path: 'a-rather-long-folder-name/with-another-long-folder-name/and-a-very-long-document-name-indeed.md',
    node_type: 'markdown',
    content: `# A heading that is long enough\n\n## And a second one below it\n\n${'The pangolin walks a very long way without stopping. '.repeat(6)}\n`,
  });
  await searchToolReady(projectId);
  await signIn(server, page);
  await page.getByRole('button', { name: 'Narrow search project', exact: true }).click();
  const results = await searchFor(page, 'pangolin');
  await results.locator('mark').first().waitFor();
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'no horizontal scrolling');
});
