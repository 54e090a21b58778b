import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { createEndpoint, type Endpoint } from './helpers.ts';

// The MCP Inspector's command-line mode (a client we did not write) against a real endpoint.
const INSPECTOR = fileURLToPath(new URL('../../node_modules/.bin/mcp-inspector', import.meta.url));
const run = promisify(execFile);
let server: TestServer;
let docs: Endpoint;
let projectId: string;
let token: string;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/a.md', node_type: 'markdown', content: '# Alpha\nfrom the inspector\n' });
  docs = await createEndpoint(server, token, projectId, 'docs', { name: 'Docs' });
});

test.after.always(async () => server?.stop());

async function inspector(args: string[], key = docs.key): Promise<any> {
  const { stdout } = await run(INSPECTOR, ['--cli', docs.url, '--transport', 'http', '--header', `Authorization: Bearer ${key}`, ...args], { timeout: 60_000 });
  return JSON.parse(stdout);
}

test('the Inspector lists the tools, reads a node and writes one that becomes a version by the endpoint', async (t) => {
  const listed = await inspector(['--method', 'tools/list']);
  const names = listed.tools.map((x: { name: string }) => x.name);
  for (const name of ['ls', 'cat', 'tree', 'write']) t.true(names.includes(name), `${name} in ${names.join(',')}`);
  const read = await inspector(['--method', 'tools/call', '--tool-name', 'cat', '--tool-arg', 'path=docs/a.md']);
  t.false(read.isError ?? false);
  t.true(JSON.stringify(read.content).includes('from the inspector'));
  const wrote = await inspector(['--method', 'tools/call', '--tool-name', 'write', '--tool-arg', 'path=docs/b.md', '--tool-arg', 'content=# B']);
  t.false(wrote.isError ?? false, JSON.stringify(wrote));
  const versions = (await server.api('GET', `/content/${projectId}/versions?path=docs/b.md`, { token })).body.data.versions;
  t.like(versions[0], { actor_type: 'agent', actor_id: docs.id, author: 'agent:Docs' });
});

test('the Inspector with a wrong key gets nothing', async (t) => {
  const err = await t.throwsAsync(inspector(['--method', 'tools/list'], 'cns_wrong_key_0000000000000000000000'));
  t.regex(String((err as { stdout?: string; stderr?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? ''), /401|auth|Unauthorized/i);
});
