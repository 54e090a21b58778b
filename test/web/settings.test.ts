import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { clickHeaderAction, dashboardSuite, openNewProject, signIn, treeItem } from '../helpers/dashboard.ts';
import { createKey, createProject } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * The project settings panel (issue 19) in headless chromium: members and invitations, access
 * keys (the secret shown once), connections with an MCP endpoint's client configuration. What
 * the panel did is checked through the public API.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite), { permissions: ['clipboard-read', 'clipboard-write'] });

/** A fresh project opened in the dashboard, with its settings panel open. */
async function openSettings(page: Page, name: string): Promise<string> {
  const projectId = await openNewProject(server, page, admin.token, orgId, name);
  await toggleSettings(page, true);
  return projectId;
}

async function toggleSettings(page: Page, open: boolean): Promise<void> {
  await clickHeaderAction(page, 'Settings');
  // (On a phone-wide screen the button is in the header's menu, closed again after the choice.)
  await page.getByRole('button', { name: 'Settings', exact: true, pressed: open, includeHidden: true }).waitFor({ state: 'attached' });
  const heading = page.getByRole('heading', { name: 'Project settings', level: 2 });
  await heading.waitFor({ state: open ? 'visible' : 'detached' });
}

/** How many times `text` occurs in the page: in its markup and in the values of its fields. */
const occurrences = (page: Page, text: string) =>
  page.evaluate<number>(`(() => {
    const count = (s) => s.split(${JSON.stringify(text)}).length - 1;
    const fields = [...document.querySelectorAll('input, textarea')].map((f) => f.value);
    return count(document.documentElement.outerHTML) + fields.reduce((n, v) => n + count(v), 0);
  })()`);

const clipboard = (page: Page) => page.evaluate<string>('navigator.clipboard.readText()');

const keysOf = async (projectId: string) =>
  (await server.api('GET', `/connections/?project_id=${projectId}&kind=api`, { token: admin.token })).body.data.connections as {
    id: string;
    name: string;
    key_prefix: string;
    status: string;
  }[];

test('a new access key is shown once, works as a Bearer token, and the list shows it without the secret', async (t) => {
  const { page } = t.context;
  const projectId = await openSettings(page, 'Keys project');
  t.is((await server.api('POST', `/content/${projectId}/mkdir`, { token: admin.token, body: { path: 'docs' } })).status, 201);
  await page.getByText('No access keys yet.').waitFor();

  await page.getByLabel('Key name').fill('ci-bot');
  await page.getByLabel('Folder it may reach').fill('/docs/');
  await page.getByLabel('Access', { exact: true }).selectOption('read');
  await page.getByRole('button', { name: 'Create key' }).click();

  const once = page.getByRole('group', { name: 'New key “ci-bot”' });
  await once.waitFor();
  t.true(await once.getByText('Copy it now: it will not be shown again.').isVisible(), 'the warning is shown');
  const secret = (await once.locator('code.secret').textContent())!;
  t.regex(secret, /^cns_[\w-]{20,}$/);
  t.is(await occurrences(page, secret), 1, 'the key is on the page exactly once');

  await page.getByRole('button', { name: 'Copy the new key' }).click();
  await once.getByRole('status').getByText('Copied.').waitFor();
  t.is(await clipboard(page), secret, 'Copy put the key on the clipboard');

  // The key works, as created: it reads docs/ and cannot write.
  t.is((await server.api('GET', `/content/${projectId}/ls?path=docs`, { token: secret })).status, 200);
  const write = await server.api('POST', `/content/${projectId}/write`, { token: secret, body: { path: 'docs/a.md', content: 'x', node_type: 'markdown' } });
  t.is(write.status, 403, 'a read-only key cannot write');

  const [key] = await keysOf(projectId);
  t.is(key!.name, 'ci-bot');
  t.true(secret.startsWith(key!.key_prefix) && key!.key_prefix.length < secret.length);
  const row = page.getByRole('row', { name: /ci-bot/ });
  const cells = await row.getByRole('cell').allTextContents();
  t.deepEqual(cells.slice(0, 4), ['/docs', 'read only', 'active', `${key!.key_prefix}…`], 'reach, access, status and the key prefix');
  t.false((await row.textContent())!.includes(secret), 'the list holds only the prefix');

  await toggleSettings(page, false);
  t.is(await occurrences(page, secret), 0, 'closing the panel forgets the key');
  await toggleSettings(page, true);
  await page.getByRole('row', { name: /ci-bot/ }).waitFor();
  t.is(await page.getByRole('group', { name: /New key/ }).count(), 0);
  t.is(await occurrences(page, secret), 0, 'reopened, the panel does not show the key again');

  // Nor does a reload (the session survives it; the key was never stored). The address keeps the settings open.
  await page.reload();
  await page.getByRole('heading', { name: 'Keys project', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Settings', exact: true, pressed: true }).waitFor();
  await page.getByRole('row', { name: /ci-bot/ }).waitFor();
  t.is(await occurrences(page, secret), 0, 'after a reload the key is not shown either');
  const stored = await page.evaluate<string>('JSON.stringify([{ ...localStorage }, { ...sessionStorage }])');
  t.false(stored.includes(secret), 'the key is not kept in web storage');
});

test('Done forgets a new key too', async (t) => {
  const { page } = t.context;
  await openSettings(page, 'Done project');
  await page.getByLabel('Key name').fill('temporary');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByRole('group', { name: 'New key “temporary”' }).locator('code.secret').textContent())!;
  t.is(await occurrences(page, secret), 1);
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('group', { name: /New key/ }).waitFor({ state: 'detached' });
  t.is(await occurrences(page, secret), 0);
  t.truthy(await page.getByRole('row', { name: /temporary/ }).getByText('whole project').textContent());
});

test('revoking a key makes the API refuse it; deleting it takes it off the list', async (t) => {
  const { page } = t.context;
  const projectId = await openSettings(page, 'Revoke project');
  const { key } = await createKey(server, admin.token, projectId, { name: 'old-bot', mode: 'read_write' });
  t.is((await server.api('GET', `/content/${projectId}/ls`, { token: key })).status, 200, 'the key works before');
  // The panel lists what exists when it opens: reopen it to see the key made through the API.
  await toggleSettings(page, false);
  await toggleSettings(page, true);

  await page.getByRole('button', { name: 'Revoke the key old-bot' }).click();
  await page.getByRole('group', { name: 'Confirm: Revoke the key old-bot' }).getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('status').getByText('Key “old-bot” revoked: it no longer works.').waitFor();
  const row = page.getByRole('row', { name: /old-bot/ });
  t.is(await row.locator('.status-badge').textContent(), 'revoked');
  t.is(await row.getByRole('button', { name: 'Revoke the key old-bot' }).count(), 0, 'a revoked key cannot be revoked again');
  t.is((await server.api('GET', `/content/${projectId}/ls`, { token: key })).status, 401, 'the API refuses the revoked key');
  t.is((await keysOf(projectId))[0]!.status, 'revoked');

  await page.getByRole('button', { name: 'Delete the key old-bot' }).click();
  await page.getByRole('group', { name: 'Confirm: Delete the key old-bot' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No access keys yet.').waitFor();
  t.deepEqual(await keysOf(projectId), []);
});

test('members: add one, change their role (checked through the API), invite someone and see the invitation', async (t) => {
  const { page } = t.context;
  const bob = await server.createUser('bob.settings@example.com', 'bob-password-1');
  const projectId = await openSettings(page, 'Team project');

  // An address without an account: the API's refusal is shown as an alert.
  await page.getByLabel('Email of an existing account').fill('nobody@example.com');
  await page.getByRole('button', { name: 'Add member' }).click();
  t.is(await page.getByRole('alert').textContent(), 'No user has this id or email; they need an account first.');

  await page.getByLabel('Email of an existing account').fill(bob.email);
  await page.getByLabel('Project role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('status').getByText(`${bob.email} was added as viewer.`).waitFor();
  t.is(await page.getByRole('alert').count(), 0, 'the alert is gone once a change succeeds');

  const select = page.getByRole('combobox', { name: `Project role of ${bob.email}` });
  t.is(await select.inputValue(), 'viewer');
  await select.selectOption('editor');
  await page.getByRole('button', { name: `Save: Project role of ${bob.email} becomes editor` }).click();
  await page.getByRole('status').getByText(`(${bob.email}) now has the project role editor.`).waitFor();
  const members = (await server.api('GET', `/projects/${projectId}/members`, { token: admin.token })).body.data.members;
  const member = members.find((m: { email: string }) => m.email === bob.email);
  t.like(member, { role: 'editor', project_role: 'editor', org_role: null });
  t.is((await server.api('GET', `/content/${projectId}/ls`, { token: bob.token })).status, 200, 'bob now reaches the project');

  await page.getByLabel('Email to invite').fill('carol.settings@example.com');
  await page.getByLabel('Organization role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await page.getByRole('status').getByText('carol.settings@example.com is invited as viewer.').waitFor();
  const invitation = page.getByRole('row', { name: /carol\.settings@example\.com/ });
  t.is(await invitation.getByRole('cell').first().textContent(), 'viewer');
  const pending = (await server.api('GET', `/organizations/${orgId}/invitations`, { token: admin.token })).body.data.invitations;
  t.like(
    pending.find((i: { email: string }) => i.email === 'carol.settings@example.com'),
    { role: 'viewer', accepted_at: null },
  );

  // The address shown once is the one that lets carol in.
  const link = (await page.getByRole('group', { name: 'Invitation for carol.settings@example.com' }).locator('code.secret').textContent())!;
  const carol = await server.createUser('carol.settings@example.com', 'carol-password-1');
  const accept = await fetch(link, { method: 'POST', headers: { authorization: `Bearer ${carol.token}` } });
  t.is(accept.status, 200);
  t.is(((await accept.json()) as { data: { role: string } }).data.role, 'viewer');
});

test('an MCP endpoint made through the API is listed with its client configuration, ready to copy', async (t) => {
  const { page } = t.context;
  const projectId = await openNewProject(server, page, admin.token, orgId, 'MCP project');
  const folder = await server.api('POST', `/content/${projectId}/mkdir`, { token: admin.token, body: { path: 'team' } });
  const made = await server.api('POST', '/mcp-endpoints', { token: admin.token, body: { project_id: projectId, node_id: folder.body.data.id, name: 'Team docs', mode: 'read' } });
  t.is(made.status, 201);
  const record = (await server.api('GET', `/mcp-endpoints/${made.body.data.mcp_endpoint.id}`, { token: admin.token })).body.data;
  await toggleSettings(page, true);

  const item = page.getByRole('list', { name: 'MCP endpoints' }).getByRole('listitem').filter({ hasText: 'Team docs' });
  await item.waitFor();
  t.is(await item.locator('.status-badge').first().textContent(), 'active');
  t.truthy(await item.getByText(record.server_url, { exact: true }).textContent());
  const config = item.getByLabel('Client configuration for Team docs', { exact: true });
  const text = (await config.textContent())!;
  t.deepEqual(JSON.parse(text), record.client_config);
  t.is(record.client_config.mcpServers['team-docs'].url, record.server_url);

  await page.getByRole('button', { name: 'Copy: Client configuration for Team docs' }).click();
  await item.getByRole('status').getByText('Copied.').first().waitFor();
  t.is(await clipboard(page), text);

  // The mode is shown as the API names it, with what it offers: read by default, read_write when asked for.
  await server.api('POST', '/mcp-endpoints', { token: admin.token, body: { project_id: projectId, node_id: folder.body.data.id, name: 'Defaulted' } });
  await server.api('POST', '/mcp-endpoints', { token: admin.token, body: { project_id: projectId, node_id: folder.body.data.id, name: 'Writers', mode: 'read_write' } });
  await toggleSettings(page, false);
  await toggleSettings(page, true);
  const modeOf = async (name: string) => {
    const entry = page.getByRole('list', { name: 'MCP endpoints' }).getByRole('listitem').filter({ has: page.getByText(name, { exact: true }) });
    return (await entry.locator('dt:text-is("Access") + dd').textContent())!.trim();
  };
  t.is(await modeOf('Team docs'), 'read: reading tools only');
  t.is(await modeOf('Defaulted'), 'read: reading tools only');
  t.is(await modeOf('Writers'), 'read_write: reading and writing tools (write, mkdir, mv, rm, rollback)');

  // The other clients' forms are there too, behind a disclosure.
  await item.getByText('Other clients').click();
  t.regex((await item.getByLabel('Claude Code command for Team docs', { exact: true }).textContent())!, /^claude mcp add --transport http team-docs /);

  // Choosing a node in the tree leaves the settings for the node's view.
  await treeItem(page, 'team', 'folder').click();
  await page.getByRole('heading', { name: 'Project settings' }).waitFor({ state: 'detached' });
  t.is(await page.getByRole('button', { name: 'Settings', exact: true }).getAttribute('aria-pressed'), 'false');
});

test('the settings panel fits a 390 px wide screen, and every control in it has a name', async (t) => {
  const { page } = t.context;
  await page.setViewportSize({ width: 390, height: 844 });
  const projectId = await openNewProject(server, page, admin.token, orgId, 'Narrow project with a rather long name');
  const folder = await server.api('POST', `/content/${projectId}/mkdir`, { token: admin.token, body: { path: 'a-folder-with-a-long-name/and-another-level' } });
  await server.api('POST', '/mcp-endpoints', { token: admin.token, body: { project_id: projectId, node_id: folder.body.data.id, name: 'A rather long endpoint name' } });
  await createKey(server, admin.token, projectId, { name: 'integration-with-a-long-name', scope_path: 'a-folder-with-a-long-name/and-another-level' });
  await toggleSettings(page, true);
  await page.getByLabel('Key name').fill('narrow-key');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('group', { name: 'New key “narrow-key”' }).waitFor();
  await page.getByRole('list', { name: 'MCP endpoints' }).getByRole('listitem').waitFor();
  await page.getByRole('row', { name: /integration-with-a-long-name/ }).waitFor();
  await page.getByRole('table', { name: /Who may open this project/ }).waitFor();

  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'no horizontal scrolling of the page');
  const wide = await page.evaluate<string[]>(`[...document.querySelectorAll('.settings, .settings *')]
    .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
    .map((e) => e.tagName + '.' + e.className)`);
  t.deepEqual(wide, [], 'nothing in the panel reaches past the right edge');

  // Every button, field and select has an accessible name (an unnamed one is listed without a quoted name).
  const snapshot = await page.getByRole('region', { name: 'Project settings' }).ariaSnapshot();
  t.regex(snapshot, /button "Copy the new key"/);
  const unnamed = snapshot.split('\n').filter((line) => /^\s*- (button|textbox|combobox|checkbox)(\s*\[[^\]]*\])?:?\s*$/.test(line));
  t.deepEqual(unnamed, []);
});

test('the Settings button is reached and worked from the keyboard', async (t) => {
  const { page } = t.context;
  await openNewProject(server, page, admin.token, orgId, 'Keyboard project');
  const button = page.getByRole('button', { name: 'Settings', exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Project settings' }).waitFor();
  t.is(await button.getAttribute('aria-pressed'), 'true');
  // From the key form, Tab walks on to its next fields.
  await page.getByLabel('Key name').focus();
  await page.keyboard.type('typed-key');
  await page.keyboard.press('Tab');
  t.is(await page.evaluate('document.activeElement.closest("label").textContent.trim()'), 'Folder it may reach');
  await page.keyboard.press('Enter');
  await page.getByRole('group', { name: 'New key “typed-key”' }).waitFor();
  // Focus moves in an effect after the group renders: wait for it (with a deadline) before asserting.
  const focused = 'document.activeElement && document.activeElement.getAttribute("aria-labelledby")';
  await page.waitForFunction(`${focused} === "settings-new-key"`, undefined, { timeout: 10_000 }).catch(() => undefined);
  t.is(await page.evaluate(focused), 'settings-new-key', 'focus moves to the new key');
});

test("an editor sees the members and connections but no key, endpoint or role controls", async (t) => {
  const { page } = t.context;
  const dana = await server.createUser('dana.settings@example.com', 'dana-password-1');
  const projectId = await createProject(server, admin.token, orgId, 'Editor project');
  t.is((await server.api('POST', `/projects/${projectId}/members`, { token: admin.token, body: { email: dana.email, role: 'editor' } })).status, 201);
  await signIn(server, page, dana.email, 'dana-password-1');
  await page.goto(`${server.url}/projects/${projectId}`);
  await page.getByRole('heading', { name: 'Editor project', level: 1 }).waitFor();
  await toggleSettings(page, true);

  await page.getByText('Your role here: editor.').waitFor();
  const row = page.getByRole('row', { name: /dana\.settings@example\.com/ });
  t.deepEqual(await row.getByRole('cell').allTextContents(), ['editor', '—', 'editor'], 'her role, as text');
  const panel = page.getByRole('region', { name: 'Project settings' });
  t.is(await panel.getByRole('combobox').count(), 0, 'no role pickers');
  t.is(await panel.getByRole('button').count(), 0, 'no buttons at all');
  t.is(await page.getByRole('button', { name: 'Add member' }).count(), 0);
  t.is(await page.getByRole('heading', { name: 'Access keys' }).count(), 0);
  t.is(await page.getByRole('heading', { name: 'MCP endpoints' }).count(), 0);
  t.is(await page.getByRole('heading', { name: 'Organization members' }).count(), 0, 'she is not in the organization');
  await page.getByRole('heading', { name: 'Syncs' }).waitFor();
  t.is(await page.getByRole('alert').count(), 0, 'nothing she may not see was asked for');
});
