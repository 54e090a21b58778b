import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCredentialRequest, tokenForRequest } from '../../src/cli/commands/gitCredential.ts';
import {
  credentialsPath,
  findServerCredentials,
  normalizeServerUrl,
  readCredentials,
  removeServerCredentials,
  saveServerCredentials,
} from '../../src/cli/credentials.ts';
import { gitToken } from '../../src/remote/gitCredentials.ts';

test('the credentials file lives under XDG_CONFIG_HOME, is private and keyed by normalized server URL', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-creds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = credentialsPath({ XDG_CONFIG_HOME: dir });
  t.is(path, join(dir, 'cns', 'credentials.json'));
  t.is(credentialsPath({ HOME: '/home/x' }), '/home/x/.config/cns/credentials.json');
  saveServerCredentials('HTTPS://Cns.Example.com:443/', { token: 't1' }, path);
  saveServerCredentials('http://localhost:8080/base/', { token: 't2', email: 'a@b.c' }, path);
  t.is(statSync(path).mode & 0o777, 0o600);
  t.deepEqual(JSON.parse(readFileSync(path, 'utf8')), {
    version: 1,
    servers: { 'https://cns.example.com': { token: 't1' }, 'http://localhost:8080/base': { token: 't2', email: 'a@b.c' } },
  });
  removeServerCredentials('https://cns.example.com', path);
  t.deepEqual(Object.keys(readCredentials(path).servers), ['http://localhost:8080/base']);
  t.deepEqual(readCredentials(join(dir, 'missing.json')), { version: 1, servers: {} });
  t.is(normalizeServerUrl('http://LOCALHOST:80'), 'http://localhost');
});

test('the entry for a request is the longest server URL that contains it', (t) => {
  const file = { version: 1 as const, servers: { 'http://h:1': { token: 'root' }, 'http://h:1/cns': { token: 'sub' }, 'http://other': { token: 'x' } } };
  t.is(findServerCredentials(file, 'http://h:1', 'cns/git/p.git')?.credentials.token, 'sub');
  t.is(findServerCredentials(file, 'http://h:1', 'git/p.git')?.credentials.token, 'root');
  t.is(findServerCredentials(file, 'http://h:1')?.credentials.token, 'sub');
  t.is(findServerCredentials(file, 'http://h:2'), null);
});

test('git-credential parses git requests and hands CNS_TOKEN only to the configured server', (t) => {
  const req = parseCredentialRequest('protocol=http\nhost=127.0.0.1:9\npath=git/p.git\n\nignored=1\n');
  t.deepEqual(req, { protocol: 'http', host: '127.0.0.1:9', path: 'git/p.git' });
  const noFile = { XDG_CONFIG_HOME: '/nonexistent' };
  t.is(tokenForRequest(req, { ...noFile, CNS_TOKEN: 'tok' }), 'tok');
  t.is(tokenForRequest(req, { ...noFile, CNS_TOKEN: 'tok', CNS_SERVER: 'http://127.0.0.1:9/' }), 'tok');
  t.is(tokenForRequest(req, { ...noFile, CNS_TOKEN: 'tok', CNS_SERVER: 'https://elsewhere' }), null);
  t.is(tokenForRequest({ protocol: 'ssh', host: 'x' }, { ...noFile, CNS_TOKEN: 'tok' }), null);
});

test('the service takes the token from Basic (password or user name) or Bearer', (t) => {
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
  t.is(gitToken(basic('cns:secret')), 'secret');
  t.is(gitToken(basic('anything:se:cret')), 'se:cret');
  t.is(gitToken(basic('secret:')), 'secret');
  t.is(gitToken(basic('secret')), 'secret');
  t.is(gitToken('Bearer abc'), 'abc');
  t.is(gitToken('Digest x'), null);
  t.is(gitToken(undefined), null);
});

test('git-credential refreshes an expired stored sign-in and saves the new pair', async (t) => {
  const { startTestServer } = await import('../helpers/server.ts');
  const { execFile } = await import('node:child_process');
  const { CNS_BIN } = await import('../helpers/cli.ts');
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const dir = mkdtempSync(join(tmpdir(), 'cns-creds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { token, refresh } = await server.login();
  const path = credentialsPath({ XDG_CONFIG_HOME: dir });
  saveServerCredentials(server.url, { token, refresh_token: refresh, expires_at: new Date(Date.now() - 1000).toISOString() }, path);

  const url = new URL(server.url);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CNS_')));
  // Asynchronously: the server answering the refresh runs in this process.
  const out = await new Promise<string>((resolve, reject) => {
    const child = execFile(process.execPath, [CNS_BIN, 'git-credential', 'get'], { env: { ...env, XDG_CONFIG_HOME: dir }, encoding: 'utf8' }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
    child.stdin!.end(`protocol=http\nhost=${url.host}\npath=git/p.git\n\n`);
  });
  const fresh = /password=(\S+)/.exec(out)?.[1] ?? '';
  // (The new access token can equal the old one byte for byte when both were signed in the same second.)
  const saved = readCredentials(path).servers[normalizeServerUrl(server.url)]!;
  t.is(saved.token, fresh);
  t.not(saved.refresh_token, refresh, 'the rotated refresh token was saved');
  t.true(Date.parse(saved.expires_at!) > Date.now());
  t.is((await server.api('GET', '/auth/me', { token: fresh })).status, 200);
});
