import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startServer } from '../../src/app/server.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { redactPath } from '../../src/logging/redact.ts';

test('bearer secrets in request paths (upload, download and invitation tokens, keys) never reach the log', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-log-'));
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const settings = loadSettings({ CNS_ADMIN_EMAIL: 'admin@example.com', CNS_ADMIN_PASSWORD: 'admin-password-1' }, { host: '127.0.0.1', port: 0, dataDir });
  const server = await startServer(settings, logger);
  t.teardown(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const login = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@example.com', password: 'admin-password-1' }),
  });
  const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  const secrets = ['UPLOADSECRET0123456789', 'DOWNLOADSECRET0123456789', 'INVITESECRET0123456789', 'cns_KEYSECRET0123456789'];
  const calls: [string, string][] = [
    ['PUT', `/api/v1/nodes/upload/${secrets[0]}`],
    ['GET', `/api/v1/nodes/download/${secrets[1]}`],
    ['POST', `/api/v1/organizations/invitations/${secrets[2]}/accept`],
    ['GET', `/api/v1/connections/${secrets[3]}`],
  ];
  for (const [method, path] of calls) {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
    await res.arrayBuffer();
  }
  const deadline = Date.now() + 30_000;
  while (lines.filter((l) => l.includes('"msg":"request"')).length < calls.length + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const requests = lines.filter((l) => l.includes('"msg":"request"'));
  t.true(requests.length >= calls.length + 1, requests.join(''));
  const text = lines.join('');
  for (const secret of secrets) t.false(text.includes(secret), secret);
  t.true(text.includes('/api/v1/nodes/upload/[redacted]'));
  t.true(text.includes('/api/v1/organizations/invitations/[redacted]/accept'));
  t.is(redactPath('/api/v1/projects/prj_1/dashboard'), '/api/v1/projects/prj_1/dashboard', 'ordinary paths stay readable');
});
