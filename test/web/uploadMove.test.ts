import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, openNewProject, treeItem } from '../helpers/dashboard.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * Uploads (the Upload button, files dropped from the desktop) and moves (a row dragged onto a
 * folder, or "Move to…" from the keyboard) in the dashboard, checked through the public API.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite));

const open = (page: Page, name: string) => openNewProject(server, page, admin.token, orgId, name);
const mkdir = (projectId: string, path: string) => server.api('POST', `/content/${projectId}/mkdir`, { token: admin.token, body: { path } });
const cat = async (projectId: string, path: string) =>
  (await server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token })).body.data;

/** A node's bytes as the API serves them (through a download address). */
async function download(nodeId: string): Promise<Buffer> {
  const address = await server.api('GET', `/nodes/${nodeId}/download`, { token: admin.token });
  const res = await fetch(address.body.data.download_url);
  return Buffer.from(await res.arrayBuffer());
}

test('the Upload button uploads the chosen files into the selected folder, with progress and their sizes in the tree', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Upload project');
  t.is((await mkdir(projectId, 'inbox')).status, 201);
  await treeItem(page, 'inbox', 'folder').click();
  await page.getByRole('heading', { name: 'inbox' }).waitFor();

  const report = randomBytes(3000);
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Upload files to /inbox' }).click();
  await (await chooser).setFiles([
    { name: 'report.bin', mimeType: 'application/octet-stream', buffer: report },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('two files at once\n') },
  ]);

  const row = treeItem(page, 'report.bin', 'file');
  await row.waitFor();
  t.is(await row.locator('.size').textContent(), '2.9 KB');
  await treeItem(page, 'notes.txt', 'file').waitFor();
  const bar = page.getByRole('progressbar', { name: 'Upload of inbox/report.bin' });
  t.is(await bar.getAttribute('value'), '3000', 'the bar is full');
  t.is(await bar.getAttribute('max'), '3000');

  const node = await cat(projectId, 'inbox/report.bin');
  t.is(node.size, 3000);
  t.true((await download(node.id)).equals(report), 'the bytes downloaded through the API are the bytes uploaded');
  t.is((await download((await cat(projectId, 'inbox/notes.txt')).id)).toString(), 'two files at once\n');

  // The same name again: the service refuses (it exists), and the error is shown for that file.
  const again = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Upload files to /inbox' }).click();
  await (await again).setFiles([{ name: 'report.bin', mimeType: 'application/octet-stream', buffer: Buffer.from('other') }]);
  await page.getByRole('alert').filter({ hasText: 'Failed: inbox/report.bin already exists' }).waitFor();
  t.true((await download(node.id)).equals(report), 'nothing was overwritten');
});

test('files dropped from the desktop onto a folder row upload into that folder', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Drop project');
  t.is((await mkdir(projectId, 'photos')).status, 201);
  const target = treeItem(page, 'photos', 'folder');
  await target.waitFor();

  // What the desktop hands over on a drop: a DataTransfer holding a File (made in the page).
  const bytes = [...randomBytes(1500)];
  const transfer = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(${JSON.stringify(bytes)})], 'dropped.bin', { type: 'application/octet-stream' }));
    return dt;
  })()`);
  await target.dispatchEvent('dragenter', { dataTransfer: transfer });
  await target.dispatchEvent('dragover', { dataTransfer: transfer });
  t.regex((await target.getAttribute('class')) ?? '', /drop-here/, 'the folder row shows it takes the drop');
  await target.dispatchEvent('drop', { dataTransfer: transfer });

  // The folder opens to show the new file.
  const row = treeItem(page, 'dropped.bin', 'file');
  await row.waitFor();
  t.is(await row.locator('.size').textContent(), '1.5 KB');
  const node = await cat(projectId, 'photos/dropped.bin');
  t.deepEqual([...(await download(node.id))], bytes);

  // Dropped on the tree but on no folder row: into the current folder (nothing selected, the root).
  const loose = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['loose\\n'], 'loose.txt', { type: 'text/plain' }));
    return dt;
  })()`);
  const area = page.getByText('Drop files here to upload them to /,');
  await area.dispatchEvent('dragover', { dataTransfer: loose });
  await area.dispatchEvent('drop', { dataTransfer: loose });
  await treeItem(page, 'loose.txt', 'file').waitFor();
  t.is((await download((await cat(projectId, 'loose.txt')).id)).toString(), 'loose\n');
});

test('a row dragged onto a folder row moves there, and "Move to…" does the same from the keyboard', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Move project');
  await server.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'draft.md', node_type: 'markdown', content: 'move me\n' } });
  t.is((await mkdir(projectId, 'archive')).status, 201);
  t.is((await mkdir(projectId, 'shelf')).status, 201);
  const id = (await cat(projectId, 'draft.md')).id;
  const nodePath = async () => (await server.api('GET', `/nodes/${id}`, { token: admin.token })).body.data.path;

  await treeItem(page, 'draft.md', 'markdown').dragTo(treeItem(page, 'archive', 'folder'));
  await page.getByRole('status').filter({ hasText: 'Moved draft.md to archive/draft.md.' }).waitFor();
  t.is(await nodePath(), 'archive/draft.md');
  // The tree follows: the row is now inside the opened archive folder.
  await page.locator('[role="treeitem"]:has(> [data-path="archive"]) [data-path="archive/draft.md"]').waitFor();

  // Keyboard only: select the row, open "Move to…", type the target folder, press Enter.
  await treeItem(page, 'draft.md', 'markdown').focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'archive/draft.md' }).waitFor();
  await page.getByRole('button', { name: 'Move to…' }).focus();
  await page.keyboard.press('Enter');
  const folder = page.getByLabel(/^Target folder/);
  t.is(await folder.inputValue(), 'archive', 'it starts from the folder the node is in');
  await folder.fill('/shelf/');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'shelf/draft.md' }).waitFor();
  t.is(await nodePath(), 'shelf/draft.md');
  t.is((await cat(projectId, 'shelf/draft.md')).content, 'move me\n');

  // A folder cannot go into itself: refused before asking the server.
  await treeItem(page, 'shelf', 'folder').click();
  await page.getByRole('button', { name: 'Move to…' }).click();
  await page.getByLabel(/^Target folder/).fill('shelf');
  await page.getByRole('button', { name: 'Move', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'shelf cannot be moved into itself.' }).waitFor();
  t.is((await cat(projectId, 'shelf')).path, 'shelf');
});
