import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, signIn, treeItem } from '../helpers/dashboard.ts';
import { createProject } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * The dashboard on a phone (390 × 844, issue 34 point 3): the header is one row with a menu for
 * the rest, the tree a drawer, an opened document the screen; no horizontal overflow, no clipped
 * label, tap targets of at least 44 px. And at 1280 × 800 the same dashboard as before: every
 * action in the header, the tree beside the document. In headless chromium.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
let projectId: string;
let content: Promise<void>;
dashboardSuite(test, (suite) => {
  ({ server, admin, orgId } = suite);
  content = (async () => {
    projectId = await createProject(server, admin.token, orgId, 'Phone project with a rather long name for a small screen');
    const write = (body: Record<string, unknown>) => server.api('POST', `/content/${projectId}/write`, { token: admin.token, body });
    await write({ path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nRead this on the train.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' });
    await write({ path: 'docs/a-file-with-a-very-long-name-that-would-not-fit-on-a-phone-screen.md', node_type: 'markdown', content: '# Long\n' });
    await write({ path: 'data.json', node_type: 'json', content: { a: 1, nested: { b: [1, 2, 3] } } });
  })();
});
test.beforeEach(() => content);

const PHONE = { width: 390, height: 844 };

/** Pixels the page is wider than its viewport (0 when nothing overflows sideways). */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

interface Box {
  label: string;
  width: number;
  height: number;
  clipped: boolean;
}

/** Every visible button (or select) inside `selector`: its size and whether its label is cut off. */
const targets = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((els) =>
    els
      .map((el) => {
        const e = el as unknown as { getBoundingClientRect(): { width: number; height: number }; scrollWidth: number; clientWidth: number; textContent: string | null; getAttribute(n: string): string | null; checkVisibility(): boolean };
        const r = e.getBoundingClientRect();
        return { visible: e.checkVisibility() && r.width > 0, label: e.getAttribute('aria-label') ?? (e.textContent ?? '').trim(), width: r.width, height: r.height, clipped: e.scrollWidth > e.clientWidth + 1 };
      })
      .filter((b) => b.visible)
      .map(({ visible: _visible, ...b }) => b),
  ) as Promise<Box[]>;

function assertTappable(t: { true(v: boolean, m?: string): void; false(v: boolean, m?: string): void }, boxes: Box[]): void {
  for (const b of boxes) {
    t.true(b.height >= 44 && b.width >= 44, `“${b.label}” is ${b.width.toFixed(0)} × ${b.height.toFixed(0)} px`);
    t.false(b.clipped, `“${b.label}” is not cut off`);
  }
}

async function openOnPhone(page: Page): Promise<void> {
  await page.setViewportSize(PHONE);
  await signIn(server, page);
  await page.goto(`${server.url}/projects/${projectId}`);
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
}

test('on a phone the tree is a drawer: a tap on a file opens it full screen and closes the drawer; nothing overflows sideways', async (t) => {
  const { page } = t.context;
  await openOnPhone(page);
  // No node open: the drawer is open on the tree.
  const files = page.getByRole('button', { name: 'Close files', exact: true }).first();
  t.is(await files.getAttribute('aria-expanded'), 'true');
  await treeItem(page, 'docs', 'folder').click();
  const long = treeItem(page, 'a-file-with-a-very-long-name-that-would-not-fit-on-a-phone-screen.md', 'markdown');
  await long.waitFor();
  t.is(await overflow(page), 0, 'no horizontal overflow with the drawer open');
  assertTappable(t, await targets(page, 'nav.side button.row'));

  await treeItem(page, 'guide.md', 'markdown').click();
  const heading = page.getByRole('heading', { name: 'docs/guide.md', level: 2 });
  await heading.waitFor();
  await page.getByRole('navigation', { name: 'Files' }).waitFor({ state: 'hidden' });
  t.true(await heading.isVisible());
  const box = (await page.getByLabel('Markdown source').boundingBox())!;
  t.true(box.x >= 0 && box.x + box.width <= PHONE.width, 'the document spans the screen, not beside a tree');
  t.true(box.width > PHONE.width * 0.8, `the editor is ${box.width.toFixed(0)} px wide`);
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('heading', { name: 'Guide' }).waitFor();
  t.is(await overflow(page), 0, 'no horizontal overflow with a document open');
  assertTappable(t, await targets(page, 'header.top button, main button, main select'));

  // The drawer opens again from the header, on the same tree.
  await page.getByRole('button', { name: 'Files', exact: true }).click();
  await treeItem(page, 'data.json', 'json').click();
  await page.getByRole('heading', { name: 'data.json', level: 2 }).waitFor();
  await page.getByRole('navigation', { name: 'Files' }).waitFor({ state: 'hidden' });
  t.is(await overflow(page), 0, 'no horizontal overflow with a JSON document open');
});

test('on a phone the header is one row and its other actions are in a menu, reachable by tap and by keyboard', async (t) => {
  const { page } = t.context;
  await openOnPhone(page);
  const header = page.locator('header.top');
  const tops = await header.locator(':scope > *').evaluateAll((els) =>
    els
      .map((el) => el as unknown as { checkVisibility(): boolean; getBoundingClientRect(): { top: number; bottom: number } })
      .filter((e) => e.checkVisibility())
      .map((e) => e.getBoundingClientRect()),
  );
  t.true(tops.length >= 3);
  const headerBox = (await header.boundingBox())!;
  t.true(headerBox.height <= 64, `the header is ${headerBox.height} px tall`);
  for (const r of tops) t.true(r.top >= headerBox.y && r.bottom <= headerBox.y + headerBox.height + 0.5, 'every header item sits in its one row');
  // Settings, trash, history… are not in the row until the menu opens.
  t.false(await page.getByRole('button', { name: 'Settings', exact: true }).isVisible());
  await page.getByRole('button', { name: 'Menu', exact: true }).click();
  const menu = page.locator('#workspace-menu');
  for (const name of ['← Projects', 'Quick open', 'Project history', 'Chat', 'Trash', 'Settings', 'Sign out']) t.true(await menu.getByRole('button', { name, exact: true }).isVisible(), name);
  t.true(await menu.getByText('admin@example.com').isVisible());
  assertTappable(t, await targets(page, '#workspace-menu button'));
  t.is(await overflow(page), 0, 'the open menu stays on screen');
  await menu.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('heading', { name: 'Project settings', level: 2 }).waitFor();
  t.false(await menu.isVisible(), 'choosing closes the menu');
  t.is(await overflow(page), 0, 'settings fit the width');

  // By keyboard: the menu button, then Tab into the menu and Enter.
  await page.getByRole('button', { name: 'Menu', exact: true }).focus();
  await page.keyboard.press('Enter');
  await menu.getByRole('button', { name: '← Projects', exact: true }).waitFor();
  // Escape closes it and gives the focus back to its button.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'hidden' });
  t.is(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent), 'Menu');
  await page.keyboard.press('Enter');
  await menu.getByRole('button', { name: '← Projects', exact: true }).waitFor();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  t.is(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent), 'Project history');
  await page.keyboard.press('Enter');
  await page.getByRole('region', { name: 'Project history' }).waitFor();
  t.is(await overflow(page), 0, 'project history fits the width');

  // Quick open from the menu: a tapped result opens the document on the whole screen.
  await page.getByRole('button', { name: 'Menu', exact: true }).click();
  await menu.getByRole('button', { name: 'Quick open', exact: true }).click();
  const palette = page.getByRole('dialog', { name: 'Quick open' });
  await palette.getByRole('combobox').fill('guide');
  await palette.getByRole('option').filter({ hasText: 'guide.md' }).first().click();
  await page.getByRole('heading', { name: 'docs/guide.md', level: 2 }).waitFor();
  await page.getByRole('navigation', { name: 'Files' }).waitFor({ state: 'hidden' });
  t.is(await overflow(page), 0);
});

test('at 1280 × 800 the header keeps every action and the tree stays beside the open document', async (t) => {
  const { page } = t.context;
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(server, page);
  await page.goto(`${server.url}/projects/${projectId}/files/docs/guide.md`);
  await page.getByRole('heading', { name: 'docs/guide.md', level: 2 }).waitFor();
  t.false(await page.getByRole('button', { name: 'Menu', exact: true }).isVisible());
  t.false(await page.getByRole('button', { name: 'Files', exact: true }).isVisible());
  for (const name of ['← Projects', 'Quick open', 'Project history', 'Chat', 'Trash', 'Settings', 'Sign out']) t.true(await page.getByRole('button', { name, exact: true }).isVisible(), name);
  const tree = (await page.getByRole('tree', { name: 'Project files' }).boundingBox())!;
  const editor = (await page.getByLabel('Markdown source').boundingBox())!;
  t.true(tree.x + tree.width <= editor.x, 'the tree is left of the document');
  // Opening a file keeps the tree in view.
  await treeItem(page, 'data.json', 'json').click();
  await page.getByRole('heading', { name: 'data.json', level: 2 }).waitFor();
  t.true(await page.getByRole('tree', { name: 'Project files' }).isVisible());
  t.is(await overflow(page), 0);
});
