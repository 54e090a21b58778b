import anyTest, { type TestFn } from 'ava';
import { crc32, deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import type { PageContext } from '../helpers/browser.ts';
import { dashboardSuite, openNewProject, treeItem } from '../helpers/dashboard.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * What the dashboard shows of a node's content beyond the editors: files previewed where the
 * browser can (images, PDF, text) through the download address, and the JSON structured view.
 */
const test = anyTest as TestFn<PageContext>;

let server: TestServer;
let admin: { token: string };
let orgId: string;
dashboardSuite(test, (suite) => ({ server, admin, orgId } = suite));

const open = (page: Page, name: string) => openNewProject(server, page, admin.token, orgId, name);
const writeFile = (projectId: string, path: string, bytes: Buffer) =>
  server.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path, node_type: 'file', content: bytes.toString('base64') } });

/** A real PNG, `width` × `height` red pixels. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([255, 0, 0]))]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

test('an image file is previewed from its download address', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'Image preview');
  t.is((await writeFile(projectId, 'pics/dot.png', png(3, 2))).status, 201);
  await treeItem(page, 'pics', 'folder').click();
  const address = page.waitForResponse((r) => /\/api\/v1\/nodes\/[^/]+\/download/.test(r.url()));
  await treeItem(page, 'dot.png', 'file').click();
  t.is((await address).status(), 200, 'the preview asks the API for a download address');
  const image = page.getByRole('img', { name: 'Preview of dot.png' });
  await image.waitFor();
  t.regex((await image.getAttribute('src')) ?? '', /^\/api\/v1\/nodes\/download\//);
  // Loaded and decoded: the browser knows the picture's real size.
  await page.waitForFunction(`document.querySelector('img[alt="Preview of dot.png"]')?.complete`);
  t.deepEqual(await page.evaluate(`(({ naturalWidth, naturalHeight }) => [naturalWidth, naturalHeight])(document.querySelector('img[alt="Preview of dot.png"]'))`), [3, 2]);
  await page.getByRole('button', { name: 'Download' }).waitFor();
});

test("a PDF is shown in the browser's viewer, a text file as text, other files not at all", async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'PDF preview');
  t.is((await writeFile(projectId, 'docs/report.pdf', PDF)).status, 201);
  t.is((await writeFile(projectId, 'docs/notes.txt', Buffer.from('first line\n<b>not bold</b>\n'))).status, 201);
  t.is((await writeFile(projectId, 'docs/archive.zip', Buffer.from('PK\x03\x04 not really'))).status, 201);
  await treeItem(page, 'docs', 'folder').click();

  await treeItem(page, 'report.pdf', 'file').click();
  const frame = page.locator('iframe[title="Preview of report.pdf"]');
  await frame.waitFor();
  // The frame holds a PDF document (the browser's viewer), made from the file's own bytes.
  await page.waitForFunction(`document.querySelector('iframe[title="Preview of report.pdf"]')?.contentDocument?.contentType === 'application/pdf'`);
  const head = await page.evaluate(`fetch(document.querySelector('iframe[title="Preview of report.pdf"]').src).then((r) => r.text()).then((s) => s.slice(0, 8))`);
  t.is(head, '%PDF-1.4');
  // The viewer is titled with the file's name (it reads the inline Content-Disposition), not a blob's random id.
  const viewerTitle = async () => {
    for (const f of page.frames()) if (f.url().startsWith('chrome-extension://')) return f.title().catch(() => '');
    return '';
  };
  const deadline = Date.now() + 15_000;
  let title = await viewerTitle();
  while (title !== 'report.pdf' && Date.now() < deadline) {
    await page.waitForTimeout(100);
    title = await viewerTitle();
  }
  t.is(title, 'report.pdf');

  await treeItem(page, 'notes.txt', 'file').click();
  const text = page.getByLabel('Preview of notes.txt');
  await text.waitFor();
  t.is(await text.textContent(), 'first line\n<b>not bold</b>\n', 'shown as text, never as HTML');

  await treeItem(page, 'archive.zip', 'file').click();
  await page.getByRole('heading', { name: 'docs/archive.zip' }).waitFor();
  await page.getByText(/^File, 15 bytes, application\/zip, version 1\.$/).waitFor();
  t.is(await page.locator('.file-preview').count(), 0, 'no preview for a zip');
  t.true(await page.getByRole('button', { name: 'Download' }).isVisible());
});

test('the JSON structured view shows nested keys with their types and follows the editor', async (t) => {
  const { page } = t.context;
  const projectId = await open(page, 'JSON tree');
  const content = { server: { host: 'example.org', ports: [80, 443], tls: { enabled: true } }, debug: false, owner: null };
  t.is((await server.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'site.json', node_type: 'json', content } })).status, 201);
  await treeItem(page, 'site.json', 'json').click();

  const tree = page.getByRole('region', { name: 'Structured view' });
  await tree.waitFor();
  const server_ = tree.locator('summary', { hasText: /^server object, 3 keys$/ });
  t.is(await server_.count(), 1);
  await tree.getByText('host: "example.org" string').waitFor();
  t.true(await tree.getByText('ports array, 2 items').isVisible());
  t.true(await tree.getByText('debug: false boolean').isVisible());
  t.true(await tree.getByText('owner: null null').isVisible());
  // Two levels start open; deeper ones open from the keyboard.
  const tls = tree.locator('summary', { hasText: /^tls object, 1 key$/ });
  t.false(await tree.getByText('enabled: true boolean').isVisible());
  await tls.focus();
  await page.keyboard.press('Enter');
  await tree.getByText('enabled: true boolean').waitFor();
  await tree.locator('summary', { hasText: /^ports array, 2 items$/ }).focus();
  await page.keyboard.press(' ');
  await tree.getByText('[1]: 443 number').waitFor();
  t.true(await tree.getByText('[0]: 80 number').isVisible(), 'array items by index');

  // Collapsing from the keyboard hides the nested keys.
  await server_.focus();
  await page.keyboard.press('Enter');
  await tree.getByText('host: "example.org" string').waitFor({ state: 'hidden' });

  // The view follows the source; invalid JSON shows no structure.
  const source = page.getByLabel('JSON source');
  await source.fill('{"renamed": {"deep": [1, "two"]}}');
  await tree.getByText('[1]: "two" string').waitFor({ state: 'attached' });
  await source.fill('{"renamed": ');
  await tree.waitFor({ state: 'detached' });
  t.pass();
});
