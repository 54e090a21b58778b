import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runLoad } from '/work/main/scripts/lib/load.ts';
import { api, benchProject, startBenchServer } from '/work/main/scripts/lib/serverProcess.ts';
const work = mkdtempSync(join(tmpdir(), 'cns-probe-'));
const prof = process.argv[2] === 'prof';
import { spawn } from 'node:child_process';
async function startProf(dir: string) {
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/pubprof/out', '/work/main/bin/cns.js', 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir], {
    env: { ...process.env, CNS_LOG_LEVEL: 'warn', CNS_RATE_LIMIT_MAX: '0', CNS_LOGIN_RATE_LIMIT_MAX: '0', CNS_ADMIN_EMAIL: 'bench@example.com', CNS_ADMIN_PASSWORD: 'bench-password' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => { let out = ''; child.stdout!.on('data', (c: Buffer) => { out += c; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) resolve(m[1]!); }); });
  return { url, stop: () => new Promise<void>((r) => { child.once('exit', () => r()); child.kill('SIGTERM'); }) };
}
const server = prof ? await startProf(join(work, 'd')) : await startBenchServer(join(work, 'd'));
const { token, projectId } = await benchProject(server.url);
const node = await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: 'docs/a.md', node_type: 'markdown', content: '# Hello\n\n' + 'Some text. '.repeat(300) });
const p = await api(server.url, 'POST', '/publishes/', token, { project_id: projectId, node_id: node.id });
const runs: [string, string, Record<string,string>?][] = [
  ['healthz', '/healthz'],
  ['openapi', '/api/v1/openapi.json'],
  ['404 key', '/api/v1/p/pk_nope'],
  ['page', `/api/v1/p/${p.publish_key}`],
  ['page md', `/api/v1/p/${p.publish_key}?format=md`],
  ['auth/me', '/api/v1/auth/me', { authorization: `Bearer ${token}` }],
  ['cat', `/api/v1/content/${projectId}/cat?path=docs/a.md`, { authorization: `Bearer ${token}` }],
];
const sel = prof ? runs.filter((r) => r[0] === process.argv[3]) : runs;
for (const [name, path, headers] of sel) await runLoad(server.url, 16, 3000, () => ({ method: 'GET', path, headers }));
for (const [name, path, headers] of sel) {
  const r = await runLoad(server.url, 16, prof ? 20000 : 8000, () => ({ method: 'GET', path, headers }));
  console.log(name.padEnd(10), fmt(r.rps, 0), 'req/s', 'errors', r.errors);
  if (prof && name === process.argv[3]) break;
}
await server.stop();
rmSync(work, { recursive: true, force: true });
