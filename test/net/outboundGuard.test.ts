import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedRequest, readLimited } from '../../src/net/guardedFetch.ts';
import { checkDestination, isPublicAddress, isRefusal } from '../../src/net/outboundGuard.ts';

const classes: Record<string, string[]> = {
  loopback: ['127.0.0.1', '127.8.9.10', '::1'],
  private: ['10.1.2.3', '172.20.0.1', '192.168.1.1', 'fc00::1', 'fd12:3456::1'],
  'link-local': ['169.254.169.254', 'fe80::1'],
  unspecified: ['0.0.0.0', '::'],
  multicast: ['224.0.0.1', 'ff02::1'],
  'IPv4-mapped': ['::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:7f00:1'],
};

test('every class of non-public address is refused, public ones pass', (t) => {
  for (const [kind, addresses] of Object.entries(classes)) for (const a of addresses) t.false(isPublicAddress(a), `${kind} ${a}`);
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) t.true(isPublicAddress(a), a);
  t.false(isPublicAddress('not-an-ip'));
});

test('checkDestination refuses IP literals of each class in URLs, other schemes and names resolving to loopback', async (t) => {
  for (const [kind, addresses] of Object.entries(classes)) {
    for (const a of addresses) {
      const host = a.includes(':') ? `[${a}]` : a;
      const e = await t.throwsAsync(checkDestination(`http://${host}:8080/mcp`, false), undefined, `${kind} ${a}`);
      t.true(isRefusal(e), `${kind} ${a}`);
    }
  }
  await t.throwsAsync(checkDestination('ftp://example.com/', false), { message: /unsupported scheme ftp:/ });
  await t.throwsAsync(checkDestination('not a url', false), { message: /not a valid URL/ });
  // localhost resolves to 127.0.0.1 (and maybe ::1): refused by what it resolves to, not by its name.
  await t.throwsAsync(checkDestination('http://localhost:8080/mcp', false), { message: /localhost resolves to a non-public address \((127\.0\.0\.1|::1)\)/ });
  t.is((await checkDestination('http://localhost:8080/mcp', true)).hostname, 'localhost', 'allowed when configured');
});

test('a guarded request never connects to a name resolving to loopback; allowed, its body is bounded', async (t) => {
  let hits = 0;
  const site = createServer((_req, res) => {
    hits++;
    res.end('0123456789');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  t.teardown(() => site.close());
  const { port } = site.address() as AddressInfo;

  const byName = await t.throwsAsync(guardedRequest(new URL(`http://localhost:${port}/`)));
  t.true(isRefusal(byName), String(byName));
  await t.throwsAsync(guardedRequest(new URL(`http://127.0.0.1:${port}/`)), { message: /not a public address/ });
  await t.throwsAsync(guardedRequest(new URL(`http://[::ffff:127.0.0.1]:${port}/`)), { message: /not a public address/ });
  t.is(hits, 0, 'nothing reached the loopback server');

  const res = await guardedRequest(new URL(`http://localhost:${port}/`), { allowPrivate: true });
  t.is((await readLimited(res, { maxBytes: 100, what: 'site' })).toString(), '0123456789');
  const small = await guardedRequest(new URL(`http://127.0.0.1:${port}/`), { allowPrivate: true });
  await t.throwsAsync(readLimited(small, { maxBytes: 5, what: 'site' }), { message: /site is larger than 5 bytes/ });
});

test('a server that does not answer in time ends the request', async (t) => {
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const { port } = silent.address() as AddressInfo;
  await t.throwsAsync(guardedRequest(new URL(`http://127.0.0.1:${port}/`), { allowPrivate: true, headersTimeoutMs: 200 }), { message: /did not answer within 0.2 s/ });
});
