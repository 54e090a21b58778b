import test from 'ava';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

// The other command-line tests run `runCli` in-process; these run the executable itself, so the
// process boundary (stdin, stdout, exit statuses, the credential files between runs) stays covered.

let server: TestServer;
const u = new CliUser();

test.before(async () => {
  server = await startTestServer();
});
test.after.always(async () => {
  u.dispose();
  await server?.stop();
});

test('bin/cns.js: login, write from stdin, ls and cat as separate processes, with their exit statuses', async (t) => {
  const login = await u.spawn(['login', '--server', server.url], { input: 'admin@example.com\nadmin-password-1\n' });
  t.is(login.code, 0, login.stderr);
  t.regex(login.stdout, /Signed in to .* as admin@example\.com/);
  const write = await u.spawn(['write', 'e2e/hello.md'], { input: '# hello\n' });
  t.is(write.code, 0, write.stderr);
  const [ls, cat, missing, usage] = await Promise.all([
    u.spawn(['ls', 'e2e']),
    u.spawn(['cat', 'e2e/hello.md']),
    u.spawn(['cat', 'e2e/missing.md']),
    u.spawn(['ls', '--bogus']),
  ]);
  t.is(ls.code, 0, ls.stderr);
  t.regex(ls.stdout, /markdown\s+8 B\s+v1\s+.*hello\.md/);
  t.is(cat.stdout, '# hello\n');
  t.is(missing.code, 4);
  t.is(missing.stderr, 'cns: no node at e2e/missing.md\n');
  t.is(usage.code, 2);
  t.regex(usage.stderr, /unknown option '--bogus'/);
});
