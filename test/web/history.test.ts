import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { clickHeaderAction, dashboardSuite, openNewProject, treeItem } from '../helpers/dashboard.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitClient, remoteUrl } from '../git/gitFixture.ts';
import { createKey } from '../helpers/project.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * Saving against a concurrent change (the conflict dialog and its three-way merge), the diff
 * views, project history and rollback, folder snapshots, and permanent deletion from the trash,
 * driven in headless chromium and checked through the public API.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite));

const open = (page: Page, name: string) => openNewProject(server, page, admin.token, orgId, name);
const write = (projectId: string, body: Record<string, unknown>, token = admin.token) =>
  server.api('POST', `/content/${projectId}/write`, { token, body });
const cat = async (projectId: string, path: string) =>
  (await server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token })).body.data;
const statStatus = async (projectId: string, path: string) =>
  (await server.api('GET', `/content/${projectId}/stat?path=${encodeURIComponent(path)}`, { token: admin.token })).status;
const trashPaths = async (projectId: string): Promise<string[]> =>
  (await server.api('GET', `/content/${projectId}/trash`, { token: admin.token })).body.data.items.map((i: { original_path: string }) => i.original_path);

/** Buttons, fields and lists of choices without a name a screen reader can read. */
const unnamedControls = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('button, input, select, textarea, iframe')]
    .filter((el) => !el.getAttribute('aria-label') && !el.getAttribute('title') && !el.closest('label') && !(el.textContent ?? '').trim())
    .map((el) => el.outerHTML)`);

test('a save that meets a concurrent change opens the dialog with the three-way merge, and saving it keeps both changes', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Merge project');
  await write(projectId, { path: 'plan.md', node_type: 'markdown', content: 'alpha\nbeta\ngamma\ndelta\n' });
  await treeItem(page, 'plan.md', 'markdown').click();
  await page.getByLabel('Markdown source').fill('alpha\nbeta\ngamma\ndelta, mine\n');

  // A second client changes the first line meanwhile.
  t.is((await write(projectId, { path: 'plan.md', node_type: 'markdown', content: 'alpha, theirs\nbeta\ngamma\ndelta\n', base_version: 1 })).status, 200);
  await page.getByText('version 2 was saved elsewhere meanwhile').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();

  const dialog = page.getByRole('dialog', { name: 'Not saved: plan.md was changed by someone else' });
  await dialog.waitFor();
  t.true(await page.evaluate(`document.activeElement?.closest('dialog') !== null`), 'focus moved into the dialog');
  t.is(await dialog.getByLabel('Merged result').textContent(), 'alpha, theirs\nbeta\ngamma\ndelta, mine\n');
  t.is((await cat(projectId, 'plan.md')).version, 2, 'nothing written before a choice');
  t.deepEqual(await unnamedControls(page), []);

  await dialog.getByRole('button', { name: 'Save the merged result' }).click();
  await page.getByText('Saved as version 3.').waitFor();
  await dialog.waitFor({ state: 'detached' });
  const saved = await cat(projectId, 'plan.md');
  t.is(saved.version, 3);
  t.is(saved.content, 'alpha, theirs\nbeta\ngamma\ndelta, mine\n', 'both changes are in the new version');
  t.is(await page.getByLabel('Markdown source').inputValue(), saved.content);
});

test('JSON merges key by key; overlapping changes are marked, and "Back to editing" and "Keep theirs" write nothing', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'JSON merge project');
  await write(projectId, { path: 'conf.json', node_type: 'json', content: { a: 1, b: 1, c: 1 } });
  await treeItem(page, 'conf.json', 'json').click();
  const source = page.getByLabel('JSON source');
  await source.fill('{"a": 2, "b": 1, "c": 1}');
  await write(projectId, { path: 'conf.json', node_type: 'json', content: { a: 1, b: 3, c: 1 }, base_version: 1 });
  await page.getByText('version 2 was saved elsewhere meanwhile').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Not saved: conf.json was changed by someone else' });
  // Neighbouring lines changed on each side: a line merge would conflict, a key merge does not.
  t.is(await dialog.getByLabel('Merged result').textContent(), JSON.stringify({ a: 2, b: 3, c: 1 }, null, 2));

  // Back to editing: the dialog closes, the text stays, nothing is written.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.is(await source.inputValue(), '{"a": 2, "b": 1, "c": 1}');
  t.is((await cat(projectId, 'conf.json')).version, 2);

  // Both sides changed "c": marked, not merged; the merged text can be taken into the editor.
  await write(projectId, { path: 'conf.json', node_type: 'json', content: { a: 1, b: 3, c: 'theirs' }, base_version: 2 });
  await page.getByText('version 3 was saved elsewhere meanwhile').waitFor();
  await source.fill('{"a": 2, "b": 1, "c": "mine"}');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await dialog.waitFor();
  t.regex(await dialog.textContent() ?? '', /One place was changed on both sides.*at \/c/);
  t.is(await dialog.getByRole('button', { name: 'Save the merged result' }).count(), 0, 'a merge with conflicts cannot be saved as it is');
  const marked = (await dialog.getByLabel('Merged result').textContent()) ?? '';
  t.regex(marked, /<<<<<<< current \(version 3\)\n {2}"c": "theirs"\n\|\|\|\|\|\|\| base \(version 1\)\n {2}"c": 1\n=======\n {2}"c": "mine"\n>>>>>>> incoming/);
  await dialog.getByRole('button', { name: 'Edit the merged result' }).click();
  await dialog.waitFor({ state: 'detached' });
  t.is(await source.inputValue(), marked);
  await page.getByRole('alert').filter({ hasText: 'Invalid JSON, not saved' }).waitFor();

  // Keep theirs: the editor shows the server's version, and nothing was written.
  await source.fill('{"a": 5, "b": 3, "c": "theirs"}');
  await write(projectId, { path: 'conf.json', node_type: 'json', content: { a: 1, b: 4, c: 'theirs' }, base_version: 3 });
  await page.getByText('version 4 was saved elsewhere meanwhile').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await dialog.getByRole('button', { name: 'Keep theirs (discard my changes)' }).click();
  await page.getByText('Kept version 4; your changes were discarded.').waitFor();
  t.is(await source.inputValue(), JSON.stringify({ a: 1, b: 4, c: 'theirs' }, null, 2));
  t.is((await cat(projectId, 'conf.json')).version, 4);
});

test('the diff shows both versions side by side, or unified', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Side by side project');
  await write(projectId, { path: 'story.md', node_type: 'markdown', content: 'one\ntwo\nthree\n' });
  await write(projectId, { path: 'story.md', node_type: 'markdown', content: 'one\n2\nthree\nfour\n' });
  await treeItem(page, 'story.md', 'markdown').click();
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Show diff' }).click();
  const diff = page.getByRole('figure', { name: 'Changes from version 1 to version 2' });
  await diff.getByLabel('Unified diff').waitFor();
  t.is(await diff.getByRole('button', { name: 'Unified' }).getAttribute('aria-pressed'), 'true');

  await diff.getByRole('button', { name: 'Side by side' }).click();
  const table = diff.getByRole('region', { name: 'Side by side diff' });
  await table.waitFor();
  t.is(await diff.getByRole('button', { name: 'Side by side' }).getAttribute('aria-pressed'), 'true');
  t.deepEqual(await table.getByRole('columnheader').allTextContents(), ['Version 1', 'Version 2']);
  // The removed line faces the line that replaced it; an added line faces nothing.
  const changed = table.locator('tr').filter({ has: page.locator('td.del') });
  t.deepEqual(await changed.locator('td').allTextContents(), ['2', '-two', '2', '+2']);
  const added = table.locator('tr').filter({ hasText: '+four' });
  t.deepEqual(await added.locator('td').allTextContents(), ['', '', '4', '+four']);
  t.deepEqual(await table.locator('tr').filter({ hasText: 'three' }).locator('td').allTextContents(), ['3', ' three', '3', ' three']);

  await diff.getByRole('button', { name: 'Unified' }).click();
  t.is(await diff.locator('.del').first().textContent(), '-two');
  t.is(await table.count(), 0);
});

test("the blame tab shows who wrote each line, an agent's lines apart from a person's, each version opening its diff", async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Blame project');
  const { key } = await createKey(server, admin.token, projectId, { name: 'scribe' });
  await write(projectId, { path: 'notes.md', node_type: 'markdown', content: 'person line\nsecond\n', message: 'first' });
  await write(projectId, { path: 'notes.md', node_type: 'markdown', content: 'person line\nagent line\n', message: 'agent rewrote' }, key);
  await treeItem(page, 'notes.md', 'markdown').click();
  await page.getByRole('tab', { name: 'Blame' }).click();
  const blame = page.getByRole('region', { name: 'Blame' });
  const rows = blame.locator('tr[data-line]');
  await rows.nth(1).waitFor();
  t.deepEqual(await rows.locator('td.line-text').allTextContents(), ['person line', 'agent line']);
  t.regex(await rows.nth(0).getAttribute('class') ?? '', /actor-user/);
  t.regex(await rows.nth(1).getAttribute('class') ?? '', /actor-agent/);
  t.regex(await rows.nth(1).locator('td.gutter').textContent() ?? '', /v2 agent scribe/);
  t.regex(await rows.nth(0).locator('td.gutter').textContent() ?? '', /v1 admin@example\.com/);
  await blame.getByRole('button', { name: 'Show the changes of version 2' }).click();
  const diff = page.getByRole('figure', { name: 'Changes from version 1 to version 2' });
  await diff.getByLabel('Unified diff').waitFor();
  t.regex(await diff.textContent() ?? '', /\+agent line/);
  t.deepEqual(await unnamedControls(page), []);
});

test('a JSON diff lists its JSON Patch operations', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Patch project');
  await write(projectId, { path: 'site.json', node_type: 'json', content: { title: 'Old', langs: ['en'], draft: true } });
  await write(projectId, { path: 'site.json', node_type: 'json', content: { title: 'New', langs: ['en', 'fr'], owner: { name: 'ana' } } });
  await treeItem(page, 'site.json', 'json').click();
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Show diff' }).click();
  const diff = page.getByRole('figure', { name: 'Changes from version 1 to version 2' });
  await diff.getByRole('button', { name: 'JSON Patch' }).click();
  const patch = diff.getByRole('region', { name: 'JSON Patch' });
  await patch.waitFor();
  t.deepEqual(await patch.getByRole('columnheader').allTextContents(), ['Operation', 'Path', 'Value']);
  const rows = await Promise.all((await patch.locator('tbody tr').all()).map((row) => row.locator('td').allTextContents()));
  t.deepEqual(
    rows.sort((a, b) => a[1]!.localeCompare(b[1]!)),
    [
      ['remove', '/draft', ''],
      ['add', '/langs/1', '"fr"'],
      ['add', '/owner', '{"name":"ana"}'],
      ['replace', '/title', '"New"'],
    ],
  );
});

test('project history shows every commit with its author and paths, and rolls the project back after confirmation', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Project rollback');
  await write(projectId, { path: 'a.md', node_type: 'markdown', content: 'one\n', message: 'start a' });
  await write(projectId, { path: 'docs/b.md', node_type: 'markdown', content: 'bee\n', message: 'add b' });
  await write(projectId, { path: 'a.md', node_type: 'markdown', content: 'two\n', message: 'change a' });
  const agent = await createKey(server, admin.token, projectId, { name: 'helper-bot', mode: 'read_write' });
  await write(projectId, { path: 'c.md', node_type: 'markdown', content: 'sea\n', message: 'agent adds c' }, agent.key);

  await page.getByRole('button', { name: 'Project history' }).click();
  const history = page.getByRole('region', { name: 'Project history' });
  await history.getByText('agent adds c').waitFor();
  const rows = history.locator('ol.commits > li');
  t.is(await rows.count(), 4);
  t.regex(await rows.nth(0).textContent() ?? '', /^v4 agent helper-bot agent adds c/);
  t.regex(await rows.nth(1).textContent() ?? '', /^v3 admin@example\.com change a/);
  t.deepEqual(await history.getByRole('list', { name: 'Paths changed in version 2' }).getByRole('listitem').allTextContents(), ['create docs', 'create docs/b.md']);
  t.not(await rows.nth(0).locator('.badge').getAttribute('class'), await rows.nth(1).locator('.badge').getAttribute('class'), 'agent and user look different');
  t.is(await history.getByRole('button', { name: 'Roll back the project to version 4' }).count(), 0, 'no rollback to the current version');
  t.deepEqual(await unnamedControls(page), []);

  await history.getByRole('button', { name: 'Roll back the project to version 2' }).click();
  const confirm = history.getByRole('group', { name: 'Confirm: Roll back the project to version 2' });
  await confirm.waitFor();
  t.is((await cat(projectId, 'a.md')).content, 'two\n', 'nothing happens before the confirmation');
  await confirm.getByRole('button', { name: 'Confirm project rollback' }).click();
  await history.getByText('Project rolled back to version 2: now version 5.').waitFor();
  t.is((await cat(projectId, 'a.md')).content, 'one\n', 'the file changed later is restored');
  t.is((await cat(projectId, 'docs/b.md')).content, 'bee\n');
  t.is(await statStatus(projectId, 'c.md'), 404, 'the file added later is gone (to the trash)');
  await rows.filter({ hasText: /^v5/ }).waitFor();
});

test('a version pushed with git shows the pusher, and the author the commit names as "authored by"', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Pushed project');
  await write(projectId, { path: 'pushed.md', node_type: 'markdown', content: 'one\n', message: 'by the API' });
  const git = new GitClient();
  t.teardown(() => git.dispose());
  const dir = git.dir('pushed');
  await git.ok(['clone', remoteUrl(server, projectId, admin.token), dir]);
  writeFileSync(join(dir, 'pushed.md'), 'two\n');
  // The git client commits as git-tester@example.com (gitFixture); the administrator pushes.
  await git.ok(['commit', '-qam', 'by git'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });

  await treeItem(page, 'pushed.md', 'markdown').click();
  await page.getByRole('tab', { name: 'History' }).click();
  const versions = page.getByRole('region', { name: 'History' }).locator('ol.versions > li');
  await versions.filter({ hasText: 'by git' }).waitFor();
  t.regex((await versions.nth(0).textContent()) ?? '', /^v2 admin@example\.com authored by git-tester@example\.com update by git/);
  t.regex((await versions.nth(1).textContent()) ?? '', /^v1 admin@example\.com create by the API/);
  t.notRegex((await versions.nth(1).textContent()) ?? '', /authored by/);

  await page.getByRole('button', { name: 'Project history' }).click();
  const commits = page.getByRole('region', { name: 'Project history' }).locator('ol.commits > li');
  await commits.filter({ hasText: 'by git' }).waitFor();
  t.regex((await commits.nth(0).textContent()) ?? '', /^v2 admin@example\.com authored by git-tester@example\.com by git/);
});

test('a folder rolls back to one of its snapshots after confirmation, leaving the rest of the project alone', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Snapshot project');
  await write(projectId, { path: 'docs/a.md', node_type: 'markdown', content: 'first\n', message: 'docs start' });
  await write(projectId, { path: 'docs/b.md', node_type: 'markdown', content: 'bee\n', message: 'docs b' });
  await write(projectId, { path: 'docs/a.md', node_type: 'markdown', content: 'second\n', message: 'docs a again' });
  await write(projectId, { path: 'outside.md', node_type: 'markdown', content: 'out v1\n' });
  await write(projectId, { path: 'docs/c.md', node_type: 'markdown', content: 'sea\n', message: 'docs c' });
  await write(projectId, { path: 'outside.md', node_type: 'markdown', content: 'out v2\n' });

  await treeItem(page, 'docs', 'folder').click();
  await page.getByRole('heading', { name: 'docs', exact: true }).waitFor();
  await page.getByRole('tab', { name: 'Snapshots' }).click();
  const panel = page.getByRole('region', { name: 'Snapshots' });
  await panel.getByText('docs c').waitFor();
  t.deepEqual(
    (await panel.locator('ol.versions > li > span:not(.badge):not(.muted)').allTextContents()).filter(Boolean),
    ['docs c', 'docs a again', 'docs b', 'docs start'],
    'only the commits that changed something in the folder, newest first',
  );

  await panel.getByRole('button', { name: 'Roll back /docs to the snapshot of version 2' }).click();
  const confirm = panel.getByRole('group', { name: 'Confirm: Roll back /docs to the snapshot of version 2' });
  await confirm.waitFor();
  t.is((await cat(projectId, 'docs/a.md')).content, 'second\n', 'nothing happens before the confirmation');
  await confirm.getByRole('button', { name: 'Confirm snapshot rollback' }).click();
  await panel.getByText(/^\/docs rolled back to the snapshot of version 2: now project version 7\.$/).waitFor();
  t.is((await cat(projectId, 'docs/a.md')).content, 'first\n');
  t.is((await cat(projectId, 'docs/b.md')).content, 'bee\n');
  t.is(await statStatus(projectId, 'docs/c.md'), 404, 'added after the snapshot: gone');
  t.is((await cat(projectId, 'outside.md')).content, 'out v2\n', 'outside the folder: untouched');
});

test('the trash deletes an item permanently after confirmation', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Purge project');
  await write(projectId, { path: 'old/draft.md', node_type: 'markdown', content: 'bye\n' });
  await write(projectId, { path: 'keep.md', node_type: 'markdown', content: 'stay\n' });
  for (const path of ['old/draft.md', 'keep.md']) {
    t.is((await server.api('POST', `/content/${projectId}/rm`, { token: admin.token, body: { path } })).status, 200);
  }
  t.deepEqual((await trashPaths(projectId)).sort(), ['keep.md', 'old/draft.md']);

  await page.getByRole('button', { name: 'Trash', exact: true }).click();
  const trash = page.getByRole('region', { name: 'Trash' });
  await trash.getByRole('button', { name: 'Delete old/draft.md permanently' }).click();
  const confirm = trash.getByRole('group', { name: 'Confirm: Delete old/draft.md permanently' });
  await confirm.waitFor();
  t.deepEqual((await trashPaths(projectId)).sort(), ['keep.md', 'old/draft.md'], 'nothing happens before the confirmation');
  await confirm.getByRole('button', { name: 'Confirm permanent deletion' }).click();
  await trash.getByText('Deleted old/draft.md permanently.').waitFor();
  t.deepEqual(await trashPaths(projectId), ['keep.md'], 'gone from the trash; the other item stays');
  await trash.getByRole('button', { name: 'Restore keep.md' }).waitFor();
  t.is(await trash.getByRole('button', { name: 'Delete old/draft.md permanently' }).count(), 0);
});

test('the dialog, the side-by-side diff and the project history fit a 390 px wide screen', async (t) => {
  const { page } = t.context;
  await page.setViewportSize({ width: 390, height: 844 });
  const projectId = await open(page, 'Narrow history');
  const long = 'a long line that would not fit a phone screen without wrapping '.repeat(3);
  await write(projectId, { path: 'n.md', node_type: 'markdown', content: `${long}\nshort\n` });
  await write(projectId, { path: 'n.md', node_type: 'markdown', content: `${long}\nshorter\n`, message: 'a change with a message' });
  await treeItem(page, 'n.md', 'markdown').click();
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByRole('button', { name: 'Show diff' }).click();
  await page.getByRole('button', { name: 'Side by side' }).click();
  await page.getByRole('region', { name: 'Side by side diff' }).waitFor();
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'side by side: no horizontal scrolling');

  await clickHeaderAction(page, 'Project history');
  await page.getByRole('region', { name: 'Project history' }).getByText('a change with a message').waitFor();
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'), 'project history: no horizontal scrolling');

  await page.getByRole('tab', { name: 'Content' }).click();
  await page.getByLabel('Markdown source').fill(`${long}\nmine\n`);
  await write(projectId, { path: 'n.md', node_type: 'markdown', content: `${long}\ntheirs\n`, base_version: 2 });
  await page.getByText('version 3 was saved elsewhere meanwhile').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Not saved: n.md was changed by someone else' });
  await dialog.waitFor();
  const box = await dialog.boundingBox();
  t.true(box !== null && box.x >= 0 && box.x + box.width <= 390, `the dialog fits: ${JSON.stringify(box)}`);
  t.true(await page.evaluate('document.documentElement.scrollWidth <= 390'));
});
