import test from 'ava';
import { createServer, type AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
let u: CliUser;
let projectId: string;

test.before(async () => {
  server = await startTestServer();
  u = new CliUser();
  await u.login(server);
  projectId = (await u.run(['projects', '--json'])).json.default_project_id;
  await u.run(['write', 'usage/a.md'], { input: 'a' });
});
test.after.always(async () => {
  u?.dispose();
  await server?.stop();
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('the global options (--server, --token, --project, --json) are taken before the command as after it', async (t) => {
  const { token } = await server.login();
  const fresh = new CliUser();
  t.teardown(() => fresh.dispose());
  const [before, between, after, mixed, keys, login] = await Promise.all([
    fresh.run(['--server', server.url, '--token', token, '--project', projectId, '--json', 'ls', 'usage']),
    fresh.run(['--server', server.url, 'ls', 'usage', '--token', token, '-p', projectId, '--json']),
    fresh.run(['ls', 'usage', '--server', server.url, '--token', token, '--project', projectId, '--json']),
    u.run(['--json', 'cat', 'usage/a.md']),
    u.run(['keys', '--json', 'ls']),
    fresh.run(['--server', server.url, '--json', 'login'], { input: 'admin@example.com\nadmin-password-1\n' }),
  ]);
  for (const r of [before, between, after]) {
    t.is(r.code, 0, r.stderr);
    t.deepEqual(r.json.entries.map((e: { name: string }) => e.name), ['a.md']);
  }
  t.is(mixed.code, 0, mixed.stderr);
  t.like(mixed.json, { path: 'usage/a.md', content_text: 'a' });
  t.is(keys.code, 0, keys.stderr);
  t.true(Array.isArray(keys.json.connections));
  t.is(login.code, 0, login.stderr);
  t.like(login.json, { server: server.url, kind: 'user' });
});

test('an option given after the command wins over the same one given before it', async (t) => {
  const r = await u.run(['--server', 'http://127.0.0.1:9', 'ls', 'usage', '--server', server.url]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /a\.md/);
});

test('a usage error prints the command line of that command and where the help is, not the whole help', async (t) => {
  const [unknown, missing, top, notHere] = await Promise.all([
    u.run(['ls', '--bogus']),
    u.run(['write']),
    u.run(['nope']),
    u.run(['--token', 'x', 'login']),
  ]);
  t.is(unknown.code, 2);
  t.is(unknown.stderr, "cns: unknown option '--bogus'\nusage: cns ls [options] [path]\nsee `cns ls --help`\n");
  t.is(missing.code, 2);
  t.is(missing.stderr, "cns: missing required argument 'path'\nusage: cns write [options] <path> [file]\nsee `cns write --help`\n");
  t.is(top.code, 2);
  t.is(top.stderr, "cns: unknown command 'nope'\nusage: cns [options] [command]\nsee `cns --help`\n");
  t.is(notHere.code, 2);
  t.is(notHere.stderr, 'cns: --token is not an option of `cns login`\nusage: cns login [options]\nsee `cns login --help`\n');
});

test('without a token, an unknown or unreachable server is reported as not signed in, not as a missing project', async (t) => {
  const fresh = new CliUser();
  t.teardown(() => fresh.dispose());
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  const [before, after, tree, withToken] = await Promise.all([
    fresh.run(['--server', nowhere, 'ls']),
    fresh.run(['ls', '--server', server.url]),
    fresh.run(['tree', '--server', nowhere, '--json']),
    fresh.run(['ls', '--server', nowhere, '--token', 'x', '-p', 'prj_abc']),
  ]);
  t.is(before.code, 3);
  t.is(before.stderr, `cns: not signed in to ${nowhere}: run \`cns login --server ${nowhere}\`, or set CNS_TOKEN\n`);
  t.is(after.code, 3);
  t.regex(after.stderr, new RegExp(`^cns: not signed in to ${server.url}`));
  t.is(tree.code, 3);
  t.like(JSON.parse(tree.stderr), { success: false, error: { code: 'UNAUTHORIZED', exit_code: 3 } });
  t.is(withToken.code, 1);
  t.is(withToken.stderr, `cns: cannot reach ${nowhere}: ECONNREFUSED\n`);
});
