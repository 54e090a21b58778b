/**
 * Screenshots of the dashboard's main views for the README (docs/screenshots/), taken in
 * headless chromium against a throwaway server with a little sample content:
 * `node --import=tsx scripts/screenshots-web.ts`.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.ts';
import { createKey, defaultProject } from '../test/helpers/project.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer } from '../test/helpers/server.ts';

const OUT = new URL('../docs/screenshots/', import.meta.url);
mkdirSync(OUT, { recursive: true });

const server = await startTestServer();
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

  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  await signIn(page);
  await page.screenshot({ path: new URL('projects.png', OUT).pathname });
  await page.getByRole('button', { name: 'First project' }).click();
  await page.getByRole('status', { name: 'Live updates on' }).waitFor();
  await page.getByRole('button', { name: 'guides (folder)' }).click();
  await page.getByRole('button', { name: 'intro.md (markdown)' }).click();
  await page.getByRole('article', { name: 'Rendered Markdown' }).getByRole('heading', { name: 'Intro' }).waitFor();
  await page.screenshot({ path: new URL('editor.png', OUT).pathname });
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Show diff' }).click();
  await page.getByRole('figure').waitFor();
  await page.screenshot({ path: new URL('history.png', OUT).pathname });
  console.log(`screenshots in ${OUT.pathname}`);
} finally {
  await browser.close();
  await server.stop();
}

async function signIn(page: Page): Promise<void> {
  await page.goto(server.url);
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'First project' }).waitFor();
}
