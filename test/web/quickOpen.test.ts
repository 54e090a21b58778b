import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, signIn, treeItem } from '../helpers/dashboard.ts';
import { createProject } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * Quick open (issue 34 point 4), by keyboard in headless chromium: Ctrl+K opens the palette,
 * files are found by name fuzzily over the whole project (GET …/paths), the
 * arrows and Enter open one as a tree click would (the address follows), Escape closes and focus
 * goes back; commands; the list stays current with the change feed; `?` lists the shortcuts.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
let projectId: string;
/** Thousands of files, among which a few to find (paging itself is tested over HTTP: test/content-api/paths.test.ts). */
const FILLER = 3000;
let content: Promise<void>;
dashboardSuite(test, (suite) => {
  ({ server, admin, orgId } = suite);
  content = (async () => {
    projectId = await createProject(server, admin.token, orgId, 'Quick project');
    const files: { path: string; content: unknown; node_type: string }[] = [];
    for (let i = 0; i < FILLER; i++) files.push({ path: `bulk/b${String(i).padStart(4, '0')}.md`, content: `# ${i}\n`, node_type: 'markdown' });
    files.push({ path: 'docs/guide.md', content: '# Guide\n', node_type: 'markdown' });
    files.push({ path: 'docs/guides-old.md', content: '# Old\n', node_type: 'markdown' });
    // Moved and trashed by one test (tests run at once: the others do not look at these).
    files.push({ path: 'movable/plan-draft.md', content: '# Plan\n', node_type: 'markdown' });
    files.push({ path: 'gone/obsolete-memo.md', content: '# Memo\n', node_type: 'markdown' });
    files.push({ path: 'notes/meeting-notes-2024.md', content: '# Meeting\n', node_type: 'markdown' });
    files.push({ path: 'zz/deep/nested/site-config.json', content: { a: 1 }, node_type: 'json' });
    const res = await server.api('POST', `/content/${projectId}/bulk-write`, { token: admin.token, body: { files, message: 'seed' } });
    if (res.status !== 200) throw new Error(`seed: ${res.status} ${JSON.stringify(res.body)}`);
  })();
});
test.beforeEach(() => content);

const palette = (page: Page) => page.getByRole('dialog', { name: 'Quick open' });
const input = (page: Page) => palette(page).getByRole('combobox', { name: 'Find a file or a command' });
const options = (page: Page) => palette(page).getByRole('option');
const at = (page: Page) => decodeURIComponent(new URL(page.url()).pathname + new URL(page.url()).search);
const focusedText = (page: Page) =>
  page.evaluate(() => {
    const el = (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null; textContent: string | null } | null } }).document.activeElement;
    return el?.getAttribute('aria-label') ?? el?.textContent ?? null;
  });

async function openProject(page: Page): Promise<void> {
  await signIn(server, page);
  await page.goto(`${server.url}/projects/${projectId}`);
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
}

test('Ctrl+K finds a file fuzzily over the whole project; arrows and Enter open it like a tree click; the address follows', async (t) => {
  const { page } = t.context;
  await openProject(page);
  await treeItem(page, 'docs', 'folder').focus();
  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  t.true(await input(page).evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement), 'the input has focus');
  // The whole project is read.
  await palette(page).getByRole('status').filter({ hasText: `${(FILLER + 6).toLocaleString('en')} files` }).waitFor();

  // Letters of the name in order, not contiguous: "sitcfg" → site-config.json, deep in the last folder.
  await page.keyboard.type('sitcfg');
  await options(page).first().filter({ hasText: 'site-config.json' }).waitFor();
  t.is(await options(page).first().getAttribute('aria-selected'), 'true');
  // The last of the filler files, by its number alone.
  await input(page).fill('');
  await page.keyboard.type('b2999');
  await options(page).first().filter({ hasText: 'b2999.md' }).waitFor();

  // Arrows move the choice; Enter opens it.
  await input(page).fill('');
  await page.keyboard.type('mtgnotes');
  await options(page).first().filter({ hasText: 'meeting-notes-2024.md' }).waitFor();
  await input(page).fill('');
  await page.keyboard.type('guide');
  const first = options(page).first();
  await first.filter({ hasText: 'guide.md' }).waitFor();
  const count = await options(page).count();
  t.true(count >= 2, 'both files named guide');
  await page.keyboard.press('ArrowDown');
  t.is(await options(page).nth(1).getAttribute('aria-selected'), 'true');
  t.is(await input(page).getAttribute('aria-activedescendant'), await options(page).nth(1).getAttribute('id'));
  await page.keyboard.press('ArrowUp');
  t.is(await first.getAttribute('aria-selected'), 'true');
  await page.keyboard.press('Enter');
  await palette(page).waitFor({ state: 'detached' });
  await page.getByRole('heading', { name: 'docs/guide.md', level: 2 }).waitFor();
  t.is(at(page), `/projects/${projectId}/files/docs/guide.md`);
  t.is(await page.getByRole('treeitem', { selected: true }).getByRole('button').getAttribute('aria-label'), 'guide.md (markdown)');
  // Back goes to where we were, as after a tree click.
  await page.goBack();
  await page.getByText('Choose a file or folder in the tree.').waitFor();
  t.is(at(page), `/projects/${projectId}`);
});

test('Escape closes the palette and focus goes back where it was; a file made elsewhere is found at once', async (t) => {
  const { page } = t.context;
  await openProject(page);
  await treeItem(page, 'notes', 'folder').focus();
  await page.keyboard.press('Control+k');
  await palette(page).getByRole('status').filter({ hasText: `${(FILLER + 6).toLocaleString('en')} files` }).waitFor();
  await page.keyboard.press('Escape');
  await palette(page).waitFor({ state: 'detached' });
  t.is(await focusedText(page), 'notes (folder)');

  // Another client writes, moves and trashes: the list follows the change feed without reading it again.
  const api = (route: string, body: unknown) => server.api('POST', `/content/${projectId}/${route}`, { token: admin.token, body });
  t.is((await api('write', { path: 'fresh/quarterly-report.md', node_type: 'markdown', content: '# Q\n' })).status, 201);
  t.is((await api('mv', { old_path: 'movable', new_path: 'moved-away' })).status, 200);
  t.is((await api('rm', { path: 'gone/obsolete-memo.md' })).status, 200);
  const requests: string[] = [];
  page.on('request', (r) => void (/\/paths\?/.test(r.url()) && requests.push(r.url())));
  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  await page.keyboard.type('qrtrep');
  await options(page).first().filter({ hasText: 'quarterly-report.md' }).waitFor();
  await input(page).fill('');
  await page.keyboard.type('plandraft');
  await options(page).first().filter({ hasText: 'moved-away' }).waitFor();
  t.false((await options(page).allTextContents()).some((x) => x.includes('plan-draft') && !x.includes('moved-away')), 'the old path is gone');
  await input(page).fill('');
  await page.keyboard.type('obsoletememo');
  await palette(page).getByRole('status').filter({ hasText: 'No file matches' }).waitFor();
  t.deepEqual(requests, [], 'kept current from the feed, not read again');
  await page.keyboard.press('Escape');
});

test('commands run from the palette by keyboard; ? lists the shortcuts outside text fields only', async (t) => {
  const { page } = t.context;
  await openProject(page);
  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  await page.keyboard.type('settings');
  await options(page).filter({ hasText: 'Settings' }).first().waitFor();
  // Files named like the command come first; the command is further down: arrows reach it.
  const labels = await options(page).allTextContents();
  const settingsAt = labels.findIndex((l) => l.includes('Settings'));
  for (let i = 0; i < settingsAt; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Project settings', level: 2 }).waitFor();
  t.is(at(page), `/projects/${projectId}/settings`);

  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  await page.keyboard.type('project history');
  await options(page).first().filter({ hasText: 'Project history' }).waitFor();
  await page.keyboard.press('Enter');
  await page.getByRole('region', { name: 'Project history' }).waitFor();
  t.is(at(page), `/projects/${projectId}/history`);

  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  await page.keyboard.type('new file');
  await options(page).first().filter({ hasText: 'New file' }).waitFor();
  await page.keyboard.press('Enter');
  await palette(page).waitFor({ state: 'detached' });
  await page.waitForFunction(() => (globalThis as unknown as { document: { activeElement: { closest(s: string): unknown } | null } }).document.activeElement?.closest('form.create') != null);
  // Typing `?` in the name field types it: no shortcut in text fields.
  await page.keyboard.type('a?');
  t.is(await page.locator('form.create input').inputValue(), 'a?');
  t.is(await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).count(), 0);

  await page.keyboard.press('Control+k');
  await input(page).waitFor();
  await page.keyboard.type('search');
  await options(page).filter({ hasText: 'Search the project' }).first().waitFor();
  const searchAt = (await options(page).allTextContents()).findIndex((l) => l.includes('Search the project'));
  for (let i = 0; i < searchAt; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (globalThis as unknown as { document: { activeElement: { closest(s: string): unknown } | null } }).document.activeElement?.closest('.search') != null);

  // Outside a text field, ? opens the list; Escape closes it and focus goes back.
  await treeItem(page, 'docs', 'folder').focus();
  await page.keyboard.press('?');
  const keys = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await keys.waitFor();
  t.true(await keys.getByText('Quick open: find a file by name, or run a command').isVisible());
  await page.keyboard.press('Escape');
  await keys.waitFor({ state: 'detached' });
  t.is(await focusedText(page), 'docs (folder)');
});
