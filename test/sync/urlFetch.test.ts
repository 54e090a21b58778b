import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress } from '../../src/sync/publicAddress.ts';
import { fetchUrl } from '../../src/sync/urlFetch.ts';

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
