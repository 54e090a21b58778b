/**
 * Screenshots of the dashboard's main views for the README (docs/screenshots/), taken in
 * headless chromium at 1280 × 800 (a phone's 390 × 844 for phone-*.png) against a throwaway
 * server with a little sample content:
 * `node --import=tsx scripts/screenshots-web.ts`.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { startFakeOpenAi } from '../test/agents/fakeProviders.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { createKey, defaultProject } from '../test/helpers/project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer } from '../test/helpers/server.ts';

const OUT = new URL('../docs/screenshots/', import.meta.url);
mkdirSync(OUT, { recursive: true });

// The chat's model is a local stand-in speaking OpenAI's streaming wire format, scripted below.
const fake = await startFakeOpenAi();
const server = await startTestServer({}, { CNS_OPENAI_BASE_URL: fake.url, CNS_OPENAI_API_KEY: 'sk-screenshots' });
const browser = await launchBrowser();
try {
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const write = (body: Record<string, unknown>, as = token) => server.api('POST', `/content/${projectId}/write`, { token: as, body });
  await write({ path: 'guides/intro.md', node_type: 'markdown', content: '# Intro\n\nWelcome to the **handbook**.\n\n- read\n- write\n', message: 'first draft' });
  const agent = await createKey(server, token, projectId, { name: 'editor-bot', mode: 'read_write' });
  await write({ path: 'guides/intro.md', node_type: 'markdown', content: '# Intro\n\nWelcome to the **team handbook**.\n\n- read\n- write\n- ask\n', message: 'clarify the welcome' }, agent.key);
  await write({ path: 'guides/setup.md', node_type: 'markdown', content: '# Setup\n' });
  await write({ path: 'config/site.json', node_type: 'json', content: { title: 'Handbook', languages: ['en', 'fr'] } });
  await write({
    path: 'guides/policy.md',
    node_type: 'markdown',
    content: '---\ntitle: Travel policy\nowner: finance\nreviewed: 2026-09-01\ntags: [travel, expenses]\n---\n# Travel policy\n\nBook through the portal; keep receipts.\n',
  });

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await signIn(page);
  await page.screenshot({ path: new URL('projects.png', OUT).pathname });
  await page.getByRole('button', { name: 'First project' }).click();
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  await page.getByRole('button', { name: 'guides (folder)' }).click();
  await page.getByRole('button', { name: 'intro.md (markdown)' }).click();
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('heading', { name: 'Intro' }).waitFor();
  await page.screenshot({ path: new URL('editor.png', OUT).pathname });
  // Who wrote each line: a person's lines and the agent's, apart.
  await page.getByRole('tab', { name: 'Blame' }).click();
  await page.getByRole('region', { name: 'Blame' }).locator('tr[data-line]').first().waitFor();
  await page.screenshot({ path: new URL('blame.png', OUT).pathname });
  await page.getByRole('tab', { name: 'Content' }).click();
  // Quick open: Ctrl+K, a few letters of a name.
  await page.keyboard.press('Control+k');
  await page.getByRole('dialog', { name: 'Quick open' }).getByRole('combobox').waitFor();
  await page.keyboard.type('polcy');
  await page.getByRole('dialog', { name: 'Quick open' }).getByRole('option').first().filter({ hasText: 'policy.md' }).waitFor();
  await page.screenshot({ path: new URL('quick-open.png', OUT).pathname });
  await page.keyboard.press('Enter');
  // Front matter as a table of properties above the text.
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('table').first().waitFor();
  await page.screenshot({ path: new URL('front-matter.png', OUT).pathname });
  await page.locator('body').click({ position: { x: 900, y: 780 } });
  await page.keyboard.press('?');
  await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
  await page.screenshot({ path: new URL('shortcuts.png', OUT).pathname });
  await page.keyboard.press('Escape');
  await treeItemOf(page, 'intro.md (markdown)').click();
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('heading', { name: 'Intro' }).waitFor();
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Show diff' }).click();
  await page.getByRole('figure').waitFor();
  await page.screenshot({ path: new URL('history.png', OUT).pathname });
  await page.getByRole('button', { name: 'Side by side' }).click();
  await page.getByRole('region', { name: 'Side by side diff' }).waitFor();
  await page.screenshot({ path: new URL('diff-side-by-side.png', OUT).pathname });

  // A save that meets another client's change: the dialog with the three-way merge.
  await page.getByRole('tab', { name: 'Content' }).click();
  await page.getByLabel('Markdown source').fill('# Intro\n\nWelcome to the **team handbook**.\n\n- read\n- write\n- ask\n- share\n');
  await write({ path: 'guides/intro.md', node_type: 'markdown', content: '# Introduction\n\nWelcome to the **team handbook**.\n\n- read\n- write\n- ask\n', base_version: 2 });
  await page.getByText('version 3 was saved elsewhere meanwhile').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('dialog').getByLabel('Merged result').waitFor();
  await page.screenshot({ path: new URL('conflict.png', OUT).pathname });
  await page.getByRole('button', { name: 'Back to editing' }).click();
  await page.getByRole('button', { name: 'Project history' }).click();
  await page.getByRole('region', { name: 'Project history' }).getByText('clarify the welcome').waitFor();
  await page.screenshot({ path: new URL('project-history.png', OUT).pathname });

  // Project settings: a member, an invitation, keys (one just created, shown once), an MCP endpoint.
  const bob = await server.createUser('bob@example.com', 'bob-password-1');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { email: bob.email, role: 'editor' } });
  const { orgId } = await defaultProject(server, token);
  await server.api('POST', `/organizations/${orgId}/invite`, { token, body: { email: 'carol@example.com', role: 'member' } });
  const guides = (await server.api('GET', `/content/${projectId}/stat?path=guides`, { token })).body.data;
  await server.api('POST', '/mcp-endpoints', { token, body: { project_id: projectId, node_id: guides.id, name: 'Team docs', mode: 'read' } });
  const history = page.getByRole('button', { name: 'Project history', pressed: true });
  if (await history.count()) await history.click();
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByLabel('Key name').fill('ci-export');
  await page.getByLabel('Folder it may reach').fill('guides');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('group', { name: 'New key “ci-export”' }).waitFor();
  await page.getByRole('list', { name: 'MCP endpoints' }).waitFor();
  // Tall enough for the whole panel, from its top.
  await page.setViewportSize({ width: 1280, height: 2100 });
  await page.getByRole('heading', { name: 'Project settings' }).evaluate((h) => h.scrollIntoView());
  await page.screenshot({ path: new URL('settings.png', OUT).pathname });

  // Search (a search tool over the project) and a chat turn in which the agent edits a document.
  await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'Handbook search' } });
  const side = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await signIn(side);
  await side.getByRole('button', { name: 'First project' }).click();
  await side.getByRole('status').filter({ hasText: /^Index ready/ }).waitFor();
  await side.getByLabel('Search', { exact: true }).fill('handbook');
  await side.getByRole('button', { name: 'Search', exact: true }).click();
  await side.getByRole('region', { name: 'Search results' }).getByRole('button', { name: /^guides\/intro\.md/ }).first().click();
  await side.getByRole('article', { name: 'Rendered Markdown' }).waitFor();
  await side.screenshot({ path: new URL('search.png', OUT).pathname });
  fake.script(
    { text: ['Let me read it first. '], toolCalls: [{ name: 'cat', arguments: { path: 'guides/intro.md' } }] },
    {
      toolCalls: [
        {
          name: 'write',
          arguments: { path: 'guides/intro.md', content: '# Introduction\n\nWelcome to the **team handbook**. Start with *Setup*.\n\n- read\n- write\n- ask\n', message: 'point newcomers to Setup' },
        },
      ],
    },
    { text: ['Done: the introduction now points newcomers to **Setup**.'] },
  );
  await side.getByRole('button', { name: 'Chat', exact: true }).click();
  await side.locator('.chat-form').getByLabel('Message', { exact: true }).fill('Tell newcomers in the intro to start with Setup');
  await side.getByRole('button', { name: 'Send' }).click();
  await side.getByRole('list', { name: 'Versions written' }).getByRole('button').first().click();
  await side.getByRole('figure').waitFor();
  await side.getByRole('log', { name: 'Conversation' }).evaluate((log) => log.scrollTo(0, log.scrollHeight));
  await side.screenshot({ path: new URL('chat.png', OUT).pathname });

  // A phone: the tree is a drawer, a tapped document takes the screen, the header's other actions are a menu.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await signIn(phone);
  await phone.getByRole('button', { name: 'First project' }).click();
  await phone.getByRole('status', { name: 'Live updates on' }).waitFor();
  await phone.getByRole('button', { name: 'guides (folder)' }).click();
  await phone.getByRole('button', { name: 'intro.md (markdown)' }).waitFor();
  await phone.screenshot({ path: new URL('phone-tree.png', OUT).pathname });
  await phone.getByRole('button', { name: 'intro.md (markdown)' }).click();
  await phone.getByRole('article', { name: 'Rendered Markdown' }).waitFor();
  await phone.getByRole('navigation', { name: 'Files' }).waitFor({ state: 'hidden' });
  await phone.screenshot({ path: new URL('phone-document.png', OUT).pathname });
  await phone.getByRole('button', { name: 'Menu', exact: true }).click();
  await phone.getByRole('button', { name: 'Sign out' }).waitFor();
  await phone.screenshot({ path: new URL('phone-menu.png', OUT).pathname });
  console.log(`screenshots in ${OUT.pathname}`);
} finally {
  await browser.close();
  await server.stop();
  await fake.close();
}

function treeItemOf(page: Page, name: string) {
  return page.getByRole('button', { name, exact: true });
}

async function signIn(page: Page): Promise<void> {
  await page.goto(server.url);
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'First project' }).waitFor();
}
