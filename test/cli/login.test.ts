import test from 'ava';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createKey, defaultProject } from '../helpers/project.ts';
import { ADMIN_EMAIL, startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
const users: CliUser[] = [];
const newUser = (env: Record<string, string> = {}) => {
  const u = new CliUser(env);
  users.push(u);
  return u;
};
const credentialsOf = (u: CliUser) => join(u.configHome, 'cns', 'credentials.json');
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

test.before(async () => {
  server = await startTestServer();
});
test.after.always(async () => {
  for (const u of users) u.dispose();
  await server?.stop();
});

test('login stores a 0600 credential file keyed by server, sets up the account, and whoami uses it', async (t) => {
  // A user who never signed in: the first sign-in sets up their account and first project.
  await server.services.users.create({ email: 'first@example.com', password: 'first-password-1' });
  const u = newUser();
  const login = await u.login(server, 'first@example.com', 'first-password-1');
  t.regex(login.stdout, new RegExp(`Signed in to ${server.url} as first@example.com \\(usr_`));
  t.regex(login.stdout, /Default project: First project \(prj_\w+\)/);
  t.is(statSync(credentialsOf(u)).mode & 0o777, 0o600);
  const stored = readJson(credentialsOf(u)).servers[server.url];
  t.truthy(stored.token);
  t.truthy(stored.refresh_token);
  t.is(stored.email, 'first@example.com');
  t.true(Date.parse(stored.expires_at) > Date.now());
  const config = readJson(join(u.configHome, 'cns', 'config.json'));
  t.is(config.server, server.url);
  t.regex(config.servers[server.url].project.id, /^prj_/);

  const [human, json] = await Promise.all([u.run(['whoami']), u.run(['whoami', '--json'])]);
  t.is(human.code, 0);
  t.is(human.stdout, `first@example.com (${json.json.user.id}) on ${server.url}\n`);
  t.is(json.code, 0);
  t.like(json.json, { server: server.url, kind: 'user', user: { email: 'first@example.com' } });
});

test('bad credentials exit 3 with the API message and store nothing', async (t) => {
  const u = newUser();
  const r = await u.run(['login', '--server', server.url], { input: `${ADMIN_EMAIL}\nwrong-password\n` });
  t.is(r.code, 3);
  t.regex(r.stderr, /^cns: The email or password is incorrect/);
  t.throws(() => statSync(credentialsOf(u)));
  const j = await u.run(['login', '--server', server.url, '--email', ADMIN_EMAIL, '--json'], { input: 'wrong-password\n' });
  t.is(j.code, 3);
  t.is(j.stdout, '');
  t.like(JSON.parse(j.stderr), { success: false, error: { code: 'UNAUTHORIZED', exit_code: 3 } });
  const empty = await u.run(['login', '--server', server.url], { input: '' });
  t.is(empty.code, 2, 'no answers on stdin is a usage error');
});

test('login --key checks the key before storing it; whoami describes the key', async (t) => {
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const { key } = await createKey(server, token, projectId, { name: 'robot', scope_path: 'docs', mode: 'read' });
  const u = newUser();
  const bad = await u.run(['login', '--server', server.url, '--key', 'cns_not_a_real_key']);
  t.is(bad.code, 3);
  t.throws(() => statSync(credentialsOf(u)));
  const ok = await u.run(['login', '--server', server.url, '--key', key]);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, /as key "robot" \(con_\w+\) of project prj_\w+, scope "\/docs", read-only/);
  t.is(readJson(credentialsOf(u)).servers[server.url].token, key);
  t.is(statSync(credentialsOf(u)).mode & 0o777, 0o600);
  const who = await u.run(['whoami', '--json']);
  t.like(who.json, { kind: 'key', connection: { name: 'robot', project_id: projectId, scope_path: 'docs', mode: 'read' } });
});

test('CNS_SERVER and CNS_TOKEN (and --server/--token) override the stored sign-in', async (t) => {
  const { token } = await server.login();
  const stored = newUser();
  await stored.login(server);
  const none = newUser();
  const [notSignedIn, viaEnv, viaFlags, badEnvOverFile] = await Promise.all([
    none.run(['whoami']),
    none.run(['whoami', '--json'], { env: { CNS_SERVER: server.url, CNS_TOKEN: token } }),
    none.run(['whoami', '--json', '--server', server.url, '--token', token]),
    stored.run(['whoami'], { env: { CNS_TOKEN: 'not-a-token' } }),
  ]);
  t.is(notSignedIn.code, 3);
  t.regex(notSignedIn.stderr, /not signed in to http:\/\/localhost:8080: run `cns login/);
  t.is(viaEnv.code, 0, viaEnv.stderr);
  t.is(viaEnv.json.server, server.url);
  t.is(viaFlags.code, 0, viaFlags.stderr);
  t.is(viaFlags.json.user.email, ADMIN_EMAIL);
  t.is(badEnvOverFile.code, 3, 'CNS_TOKEN wins over the stored sign-in');
  t.regex(badEnvOverFile.stderr, /The token is invalid, expired or revoked/);
});

test('an expired stored sign-in is refreshed once (even by concurrent commands) and saved back; logout forgets it', async (t) => {
  const u = newUser();
  await u.login(server);
  const file = readJson(credentialsOf(u));
  const old = file.servers[server.url];
  file.servers[server.url] = { ...old, token: 'expired', expires_at: '2000-01-01T00:00:00.000Z' };
  writeFileSync(credentialsOf(u), JSON.stringify(file), { mode: 0o600 });
  // Concurrent commands refresh once between them: a reused refresh token would revoke the sign-in.
  const runs = await Promise.all([1, 2, 3].map(() => u.run(['whoami'])));
  for (const r of runs) t.is(r.code, 0, r.stderr);
  t.is((await u.run(['whoami'])).code, 0);
  const renewed = readJson(credentialsOf(u)).servers[server.url];
  t.not(renewed.token, 'expired');
  t.not(renewed.refresh_token, old.refresh_token, 'refresh tokens are single use: the new one is kept');
  t.is(statSync(credentialsOf(u)).mode & 0o777, 0o600);

  const out = await u.run(['logout']);
  t.is(out.stdout, `Signed out of ${server.url}\n`);
  t.deepEqual(readJson(credentialsOf(u)).servers, {});
  const [after, again] = await Promise.all([u.run(['whoami']), u.run(['logout', '--json'])]);
  t.is(after.code, 3);
  t.is(again.code, 0);
  t.deepEqual(again.json, { server: server.url, signed_out: false });
  const refresh = await server.api('POST', '/auth/refresh', { body: { refresh_token: renewed.refresh_token } });
  t.is(refresh.status, 401, 'logout revoked the refresh token');
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('usage errors exit 2, an unreachable server 1; --help documents the exit statuses', async (t) => {
  const u = newUser();
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  const [help, unknownOption, missingArg, badDepth, badServer, unreachable, cmdHelp] = await Promise.all([
    u.run(['--help']),
    u.run(['ls', '--bogus']),
    u.run(['write']),
    u.run(['tree', '--depth', 'deep', '--server', server.url, '--token', 'x']),
    u.run(['whoami', '--server', 'ftp://example.com']),
    u.run(['whoami', '--server', nowhere, '--token', 'x']),
    u.run(['write', '--help']),
  ]);
  t.is(help.code, 0);
  t.regex(help.stdout, /Exit status:\n  0  success\n  1  other failure.*\n  2  usage error.*\n  3  authentication.*\n  4  not found.*\n  5  conflict/);
  t.regex(help.stdout, /CNS_SERVER[\s\S]*CNS_TOKEN[\s\S]*CNS_PROJECT/);
  t.is(unknownOption.code, 2);
  t.regex(unknownOption.stderr, /unknown option '--bogus'/);
  t.is(missingArg.code, 2);
  t.is(badDepth.code, 2);
  t.regex(badDepth.stderr, /--depth must be a whole number/);
  t.is(badServer.code, 2);
  t.is(unreachable.code, 1);
  t.is(unreachable.stderr, `cns: cannot reach ${nowhere}: ECONNREFUSED\n`);
  t.is(cmdHelp.code, 0);
  t.regex(cmdHelp.stdout, /--base-version <n>[\s\S]*--recursive/);
});

test('every sign-in (not only the first) leaves a default project the account can open, so ls works right after', async (t) => {
  // An account already set up elsewhere (the dashboard), signing in from a fresh machine.
  const other = await server.createUser('returning@example.com', 'returning-password-1');
  const { projectId } = await defaultProject(server, other.token);
  await server.api('POST', `/content/${projectId}/write`, { token: other.token, body: { path: 'hello.md', node_type: 'markdown', content: 'hi' } });
  const u = newUser();
  const login = await u.login(server, 'returning@example.com', 'returning-password-1');
  t.regex(login.stdout, new RegExp(`Default project: First project \\(${projectId}\\)`));
  const ls = await u.run(['ls']);
  t.is(ls.code, 0, ls.stderr);
  t.regex(ls.stdout, /hello\.md/);

  // The same machine, now another account that cannot open the stored project: it gets its own.
  await server.services.users.create({ email: 'second-account@example.com', password: 'second-password-1' });
  const again = await u.login(server, 'second-account@example.com', 'second-password-1');
  const mine = readJson(join(u.configHome, 'cns', 'config.json')).servers[server.url].project.id;
  t.not(mine, projectId);
  t.regex(again.stdout, new RegExp(`Default project: First project \\(${mine}\\)`));
  t.is((await u.run(['ls'])).code, 0);
});
