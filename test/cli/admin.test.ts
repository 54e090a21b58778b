import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

test('cns user create resolves the data folder like serve (CNS_DATA_DIR) and never creates a database unless asked', async (t) => {
  const server = await startTestServer();
  const u = new CliUser();
  const elsewhere = mkdtempSync(join(tmpdir(), 'cns-admin-cwd-'));
  t.teardown(async () => {
    u.dispose();
    rmSync(elsewhere, { recursive: true, force: true });
    await server.stop();
  });

  // From another folder without CNS_DATA_DIR: a clear error, and nothing created there.
  const lost = await u.run(['user', 'create', '-e', 'lost@example.com', '--password', 'password-123'], { cwd: elsewhere });
  t.is(lost.code, 2, lost.stderr);
  t.regex(lost.stderr, /no cns database in .*repos.*CNS_DATA_DIR/);
  t.deepEqual(readdirSync(elsewhere), []);

  // CNS_DATA_DIR names the server's folder, from anywhere: the running server knows the user at once.
  const made = await u.run(['user', 'create', '-e', 'env@example.com', '--password', 'password-123'], { cwd: elsewhere, env: { CNS_DATA_DIR: server.dataDir, ...server.storeEnv } });
  t.is(made.code, 0, made.stderr);
  t.regex(made.stdout, /created user env@example\.com/);
  const login = await server.api('POST', '/auth/login', { body: { email: 'env@example.com', password: 'password-123' } });
  t.is(login.status, 200);

  // --data-dir works the same; --init is the explicit way to start a new data folder.
  const fresh = join(elsewhere, 'fresh');
  const refused = await u.run(['user', 'create', '-e', 'a@example.com', '--password', 'password-123', '--data-dir', fresh]);
  t.is(refused.code, 2);
  t.false(existsSync(fresh));
  const init = await u.run(['user', 'create', '-e', 'a@example.com', '--password', 'password-123', '--data-dir', fresh, '--init', '--admin']);
  t.is(init.code, 0, init.stderr);
  t.true(existsSync(join(fresh, 'cns.db')));
});

test('cns user create without --password reads one line of stdin; with none it says what is missing (exit 2)', async (t) => {
  const server = await startTestServer();
  const u = new CliUser({ CNS_DATA_DIR: server.dataDir, ...server.storeEnv });
  t.teardown(async () => {
    u.dispose();
    await server.stop();
  });
  const [none, blank, piped] = await Promise.all([
    u.run(['user', 'create', '-e', 'none@example.com'], { input: '' }),
    u.run(['user', 'create', '-e', 'blank@example.com'], { input: '\n' }),
    u.run(['user', 'create', '-e', 'piped@example.com'], { input: 'piped-password-1\n' }),
  ]);
  for (const r of [none, blank]) {
    t.is(r.code, 2);
    t.is(r.stdout, '');
    t.regex(r.stderr, /^cns: no password: pass --password PASSWORD, or the password as a line on stdin\n$/m);
  }
  t.is(piped.code, 0, piped.stderr);
  t.regex(piped.stdout, /created user piped@example\.com/);
  t.is((await server.api('POST', '/auth/login', { body: { email: 'piped@example.com', password: 'piped-password-1' } })).status, 200);
  t.is((await server.api('POST', '/auth/login', { body: { email: 'none@example.com', password: 'x' } })).status, 401, 'no user without a password');
});

test('bin/cns.js runs as `cns` from any folder once on the PATH, as the README shows', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync, symlinkSync } = await import('node:fs');
  const { CNS_BIN } = await import('../helpers/cli.ts');
  const binDir = mkdtempSync(join(tmpdir(), 'cns-path-'));
  t.teardown(() => rmSync(binDir, { recursive: true, force: true }));
  // What `npm link` does: a `cns` link to bin/cns.js in a folder on the PATH.
  symlinkSync(CNS_BIN, join(binDir, 'cns'));
  const r = spawnSync('cns', ['--version'], { cwd: binDir, encoding: 'utf8', env: { ...process.env, PATH: `${binDir}:${process.env.PATH}` } });
  t.is(r.status, 0, r.stderr);
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  t.is(r.stdout.trim(), version);
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  t.regex(readme, /Put `cns` on your PATH/);
  t.regex(readme, /npm link/);
});

test('cns reindex resolves the data folder like serve and never creates a database in the wrong folder', async (t) => {
  const server = await startTestServer();
  const u = new CliUser();
  const elsewhere = mkdtempSync(join(tmpdir(), 'cns-reindex-cwd-'));
  t.teardown(async () => {
    u.dispose();
    rmSync(elsewhere, { recursive: true, force: true });
    await server.stop();
  });
  const lost = await u.run(['reindex'], { cwd: elsewhere });
  t.is(lost.code, 2, lost.stderr);
  t.regex(lost.stderr, /no cns database in /);
  t.deepEqual(readdirSync(elsewhere), [], 'nothing created');
  const found = await u.run(['reindex'], { cwd: elsewhere, env: { CNS_DATA_DIR: server.dataDir, ...server.storeEnv } });
  t.is(found.code, 0, found.stderr);
  t.regex(found.stdout, /index matched git|no repositories/);
});
