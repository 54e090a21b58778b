import test from 'ava';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { api, benchProject, startBenchServer } from '../../scripts/lib/serverProcess.ts';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

/** Asks for an upload address. */
async function announce(name: string, size: number, parentId: string | null = null) {
  const res = await f.call('POST', '/nodes/upload', { project_id: f.pid, parent_id: parentId, name, size });
  if (res.status !== 201) throw new Error(`upload request: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { upload_url: string; node_id: string; path: string };
}

/** PUTs `chunks()` to `url` with node:http, streaming (no body is ever held whole). */
function put(url: string, chunks: Iterable<Buffer>, contentLength?: number): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream' };
    if (contentLength !== undefined) headers['content-length'] = contentLength;
    const req = request(url, { method: 'PUT', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    const it = chunks[Symbol.iterator]();
    const pump = () => {
      for (;;) {
        const n = it.next();
        if (n.done) return void req.end();
        if (!req.write(n.value)) return void req.once('drain', pump);
      }
    };
    pump();
  });
}

function* pattern(size: number, chunk = 1 << 20): Generator<Buffer> {
  for (let off = 0, i = 0; off < size; off += chunk, i++) {
    const b = Buffer.alloc(Math.min(chunk, size - off), i % 251);
    b.writeUInt32BE(i, 0);
    yield b;
  }
}

const gitBlobId = (chunks: Iterable<Buffer>, size: number) => {
  const h = createHash('sha1').update(`blob ${size}\0`);
  for (const c of chunks) h.update(c);
  return h.digest('hex');
};

test('a 50 MB upload streams to disk with bounded memory (measured in the server process) and becomes one file node; Range works', async (t) => {
  const size = 50 * 1024 * 1024;
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-upload-'));
  // One process: the pid measured below is then the one that receives the bytes (with several
  // workers it would be the primary, which never reads a body).
  const server = await startBenchServer(dataDir, { CNS_WORKERS: '1' });
  t.teardown(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const { token, projectId } = await benchProject(server.url);
  const call = (method: string, path: string, body?: unknown) => api(server.url, method, path, token, body);
  const folder = await call('POST', '/nodes/folder', { project_id: projectId, name: 'uploads' });
  const up = await call('POST', '/nodes/upload', { project_id: projectId, parent_id: folder.id, name: 'big.bin', size });
  t.regex(up.upload_url, /\/api\/v1\/nodes\/upload\//);

  // Resident memory of the server process, sampled while the bytes stream in.
  const status = () => readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const kb = (field: string, text = status()) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)![1]) * 1024;
  const baseline = kb('VmRSS');
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, kb('VmRSS'))), 5);
  const res = await put(up.upload_url.replace(/^http:\/\/[^/]+/, server.url), pattern(size), size);
  clearInterval(timer);
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  t.log(`50 MB upload: server RSS ${mb(baseline)} MB before, peak ${mb(peak)} MB during (+${mb(peak - baseline)} MB)`);
  t.is(res.status, 201, JSON.stringify(res.body));
  // Bounded, not proportional: about 37 MB of stream buffers and uncollected garbage for 50 MB and for 200 MB alike.
  t.true(peak - baseline < 45 * 1024 * 1024, `the server grew by ${mb(peak - baseline)} MB for a 50 MB upload`);

  const node = res.body.data;
  t.is(node.id, up.node_id, 'the node has the id announced with the address');
  t.is(node.type, 'file');
  t.is(node.size, size);
  t.is(node.version, 1);
  t.is(node.parent_id, folder.id);
  t.is(node.content_hash, gitBlobId(pattern(size), size));
  t.is((await call('GET', `/nodes/${node.id}/versions`)).total, 1);

  const dl = await call('GET', `/nodes/${node.id}/download`);
  const url = dl.download_url.replace(/^http:\/\/[^/]+/, server.url);
  const ranged = await fetch(url, { headers: { range: 'bytes=1048576-1048583' } });
  t.is(ranged.status, 206);
  t.is(ranged.headers.get('content-range'), `bytes 1048576-1048583/${size}`);
  t.is(ranged.headers.get('content-length'), '8');
  t.deepEqual([...Buffer.from(await ranged.arrayBuffer())], [0, 0, 0, 1, 1, 1, 1, 1], 'the second megabyte starts with its chunk number');
  const tail = await fetch(url, { headers: { range: 'bytes=-4' } });
  t.is(tail.status, 206);
  t.deepEqual([...Buffer.from(await tail.arrayBuffer())], [49, 49, 49, 49]);
  const whole = await fetch(url);
  t.is(whole.headers.get('content-length'), String(size));
  const h = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of whole.body!) h.update(chunk);
  t.is(h.digest('hex'), node.content_hash, 'the whole download streams back the same bytes');
});

test('download addresses: headers, whole body, ETag, past versions, no credential needed', async (t) => {
  const content = Buffer.from('first version of a small text file\n');
  const up = await announce('small.txt', content.length);
  t.is((await put(up.upload_url, [content], content.length)).status, 201);
  await f.call('PUT', `/nodes/${up.node_id}`, { content: Buffer.from('second\n').toString('base64') });

  const now = (await f.call('GET', `/nodes/${up.node_id}/download`)).body.data;
  t.is(now.version, 2);
  const res = await fetch(now.download_url);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.is(res.headers.get('content-length'), '7');
  t.regex(res.headers.get('content-disposition') ?? '', /attachment; filename\*=UTF-8''small\.txt/);
  const etag = res.headers.get('etag');
  t.is(etag, `"${now.content_hash}"`);
  t.is(await res.text(), 'second\n');
  t.is((await fetch(now.download_url, { headers: { 'if-none-match': etag! } })).status, 304);

  const old = (await f.call('GET', `/nodes/${up.node_id}/download?version=1`)).body.data;
  t.is(old.version, 1);
  t.is(await (await fetch(old.download_url)).text(), content.toString());
  t.is((await f.call('GET', `/nodes/${up.node_id}/download?version=7`)).status, 404);
  const folder = await f.make('folder', 'nodl');
  t.is((await f.call('GET', `/nodes/${folder.id}/download`)).status, 422);
});

test('a PDF can be served inline under its name (for the browser viewer\'s title); other files only as attachments', async (t) => {
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');
  const up = await announce('Quarterly report.pdf', pdf.length);
  t.is((await put(up.upload_url, [pdf], pdf.length)).status, 201);
  const url = (await f.call('GET', `/nodes/${up.node_id}/download`)).body.data.download_url as string;
  const inline = await fetch(`${url}?disposition=inline`);
  t.is(inline.status, 200);
  t.is(inline.headers.get('content-type'), 'application/pdf');
  t.is(inline.headers.get('content-disposition'), "inline; filename*=UTF-8''Quarterly%20report.pdf");
  t.deepEqual(Buffer.from(await inline.arrayBuffer()), pdf);
  t.is((await fetch(url)).headers.get('content-disposition'), "attachment; filename*=UTF-8''Quarterly%20report.pdf", 'attachment unless asked');
  t.is((await fetch(`${url}?disposition=attachment`)).headers.get('content-disposition'), "attachment; filename*=UTF-8''Quarterly%20report.pdf");
  const bad = await fetch(`${url}?disposition=embedded`);
  t.is(bad.status, 422);
  t.is(((await bad.json()) as { code: string }).code, 'VALIDATION_ERROR');

  // Anything else (HTML here) is never served inline on the service's origin.
  const html = Buffer.from('<script>alert(1)</script>');
  const page = await announce('page.html', html.length);
  t.is((await put(page.upload_url, [html], html.length)).status, 201);
  const pageUrl = (await f.call('GET', `/nodes/${page.node_id}/download`)).body.data.download_url as string;
  const refused = await fetch(`${pageUrl}?disposition=inline`);
  t.is(refused.status, 422);
  t.regex(((await refused.json()) as { message: string }).message, /Only PDFs/);
});

test('expired, tampered and reused addresses are refused and write nothing', async (t) => {
  const body = Buffer.from('hello');
  const up = await announce('once.txt', body.length);
  const [prefix, token] = up.upload_url.split('/upload/');

  const [h, p, s] = token.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
  const forged = Buffer.from(JSON.stringify({ ...claims, name: 'other.txt' })).toString('base64url');
  const tampered = await put(`${prefix}/upload/${h}.${forged}.${s}`, [body], body.length);
  t.is(tampered.status, 401);
  t.false(tampered.body.success);
  t.is(tampered.body.error.code, 'UNAUTHORIZED');

  const past = Math.floor(Date.now() / 1000) - 3600;
  const expiredToken = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('cns')
    .setAudience('cns-upload')
    .setIssuedAt(past)
    .setExpirationTime(past + 60)
    .sign(f.server.services.signingSecret);
  const expired = await put(`${prefix}/upload/${expiredToken}`, [body], body.length);
  t.is(expired.status, 401);
  t.regex(expired.body.message, /expired/);
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404, 'nothing written');

  t.is((await put(up.upload_url, [body], body.length)).status, 201);
  const again = await put(up.upload_url, [Buffer.from('again')], 5);
  t.is(again.status, 403);
  t.false(again.body.success);
  t.is((await f.call('GET', `/nodes/${up.node_id}/versions`)).body.data.total, 1, 'the second PUT wrote nothing');

  const dl = (await f.call('GET', `/nodes/${up.node_id}/download`)).body.data.download_url as string;
  const bad = await fetch(dl.slice(0, -3) + (dl.endsWith('AAA') ? 'BBB' : 'AAA'));
  t.is(bad.status, 401);
  const asUpload = await fetch(dl.replace('/download/', '/upload/'), { method: 'PUT', body: 'x' });
  t.is(asUpload.status, 401, 'a download address is no upload address');
});

test('sizes: over the limit is 413 up front; more bytes than declared is 413, fewer is 422; nothing written', async (t) => {
  const tooBig = await f.call('POST', '/nodes/upload', { project_id: f.pid, name: 'huge.bin', size: 2 * 1024 * 1024 * 1024 });
  t.is(tooBig.status, 413);
  t.is(tooBig.body.error.code, 'PAYLOAD_TOO_LARGE');

  const up = await announce('sized.bin', 10);
  t.is((await put(up.upload_url, [Buffer.alloc(20)], 20)).status, 413, 'Content-Length above the declared size');
  t.is((await put(up.upload_url, [Buffer.alloc(11)])).status, 413, 'chunked body longer than declared');
  t.is((await put(up.upload_url, [Buffer.alloc(4)])).status, 422, 'body shorter than declared');
  t.is((await f.call('GET', `/nodes/${up.node_id}`)).status, 404);
  t.is((await put(up.upload_url, [Buffer.alloc(10)], 10)).status, 201, 'a failed PUT does not use the address up');

  t.is((await f.call('POST', '/nodes/upload', { project_id: f.pid, name: 'sized.bin', size: 1 })).status, 409, 'the name is taken');
});
