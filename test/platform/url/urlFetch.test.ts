import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress } from '../../../src/net/outboundGuard.ts';
import { fetchUrl } from '../../../src/platform/url/urlFetch.ts';

test('non-public addresses are recognised', (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', 'not-an-ip']) {
    t.false(isPublicAddress(a), a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) t.true(isPublicAddress(a), a);
});

test('a url sync refuses loopback by literal, by name and through a redirect; allowed when configured', async (t) => {
  let hits = 0;
  const site = createServer((req, res) => {
    hits++;
    if (req.url === '/hop') {
      res.writeHead(302, { location: `http://localhost:${(site.address() as AddressInfo).port}/page` });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('secret');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  t.teardown(() => site.close());
  const port = (site.address() as AddressInfo).port;

  await t.throwsAsync(fetchUrl(`http://127.0.0.1:${port}/page`, { maxBytes: 100 }), { message: /not a public address/ });
  await t.throwsAsync(fetchUrl(`http://localhost:${port}/page`, { maxBytes: 100 }), { message: /non-public address/ });
  t.is(hits, 0, 'nothing reached the private server');

  const allowed = await fetchUrl(`http://localhost:${port}/hop`, { maxBytes: 100, allowPrivate: true });
  t.is(allowed.bytes.toString(), 'secret');
  await t.throwsAsync(fetchUrl(`http://127.0.0.1:${port}/page`, { maxBytes: 3, allowPrivate: true }), { message: /larger than 3 bytes/ });
  await t.throwsAsync(fetchUrl('file:///etc/passwd', { maxBytes: 100, allowPrivate: true }), { message: /unsupported scheme/ });
});

test('a url sync never shows or records the userinfo or query string of its address, yet fetches with them', async (t) => {
  const { startTestServer } = await import('../../helpers/server.ts');
  const { defaultProject } = await import('../../helpers/project.ts');
  const { execFileSync } = await import('node:child_process');
  const { readdirSync } = await import('node:fs');
  const { join } = await import('node:path');
  const seen: { url: string; auth: string | undefined }[] = [];
  const site = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    if (req.url?.startsWith('/missing')) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end('# fetched\n');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  t.teardown(() => site.close());
  const port = (site.address() as AddressInfo).port;
  const server = await startTestServer({}, { CNS_URL_FETCH_ALLOW_PRIVATE: '1' });
  t.teardown(() => server.stop());
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const viewer = await server.createUser('url-viewer@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });

  const secrets = ['PASSWORD123', 'QUERYSECRET', 'alice'];
  const url = `http://alice:PASSWORD123@127.0.0.1:${port}/doc.md?token=QUERYSECRET`;
  const made = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'url', config: { url, path: 'fetched/doc.md' } } });
  t.is(made.status, 201, JSON.stringify(made.body));
  const syncId: string = made.body.data.sync.id;
  const refreshed = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  t.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  t.is(seen[0]!.url, '/doc.md?token=QUERYSECRET', 'the stored address is used whole');
  t.is(seen[0]!.auth, `Basic ${Buffer.from('alice:PASSWORD123').toString('base64')}`);

  const failing = await server.api('POST', '/sync/bootstrap', {
    token,
    body: { project_id: projectId, provider: 'url', config: { url: `http://alice:PASSWORD123@127.0.0.1:${port}/missing.md?token=QUERYSECRET`, path: 'fetched/missing.md' } },
  });
  const failed = await server.api('POST', `/sync/syncs/${failing.body.data.sync.id}/refresh`, { token });
  t.true(failed.status >= 400);

  const shown = [
    made.body,
    failed.body,
    (await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token: viewer.token })).body,
    (await server.api('GET', `/sync/syncs/${failing.body.data.sync.id}/runs`, { token: viewer.token })).body,
    (await server.api('GET', `/sync/changelog?project_id=${projectId}`, { token: viewer.token })).body,
    (await server.api('GET', `/connections/?project_id=${projectId}`, { token })).body,
    (await server.api('GET', `/projects/${projectId}/dashboard`, { token: viewer.token })).body,
  ];
  const fetched = (await server.api('GET', `/content/${projectId}/stat?path=fetched/doc.md`, { token: viewer.token })).body;
  t.truthy(fetched.data?.id, JSON.stringify(fetched));
  shown.push((await server.api('GET', `/nodes/${fetched.data.id}/versions`, { token: viewer.token })).body);
  const repo = readdirSync(server.dataDir).find((f) => f.startsWith(projectId) && f.endsWith('.git'))!;
  const gitLog = execFileSync('git', ['--git-dir', join(server.dataDir, repo), 'log', '--format=%an <%ae>%n%cn%n%B'], { encoding: 'utf8' });
  t.regex(gitLog, new RegExp(`127\\.0\\.0\\.1:${port}/doc\\.md`), 'the commit still names the address');
  const text = JSON.stringify(shown) + gitLog;
  t.true(text.includes(`http://127.0.0.1:${port}/doc.md?[redacted]`));
  for (const secret of secrets) t.false(text.includes(secret), secret);
});
