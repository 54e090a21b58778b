import test from 'ava';
import { DEFAULT_PASSWORD_HASH_COST, dummyPasswordHash, hashPassword, verifyPassword } from '../../src/auth/passwords.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer } from '../helpers/server.ts';

test('a hash names its cost, so a password hashed at another cost still verifies', async (t) => {
  const standard = await hashPassword('correct horse');
  t.is(standard.split('$')[1], String(2 ** DEFAULT_PASSWORD_HASH_COST), 'N = 2^14 by default');
  const raised = await hashPassword('correct horse', 15);
  t.is(raised.split('$')[1], '32768');
  for (const stored of [standard, raised, await hashPassword('correct horse', 10)]) {
    t.true(await verifyPassword('correct horse', stored));
    t.false(await verifyPassword('correct horsE', stored));
  }
  t.false(await verifyPassword('x', 'md5$abc'), 'a malformed hash matches nothing');
});

test('the stand-in hash for unknown emails has the cost new passwords get (the same time either way)', (t) => {
  t.is(dummyPasswordHash().split('$')[1], '16384');
  t.is(dummyPasswordHash(12).split('$')[1], '4096');
});

test('CNS_PASSWORD_HASH_COST sets the cost of the passwords a server hashes; out of range, the service refuses to start', async (t) => {
  t.is(loadSettings({}).passwordHashCost, 14);
  t.is(loadSettings({ CNS_PASSWORD_HASH_COST: '16' }).passwordHashCost, 16);
  for (const bad of ['9', '21', 'x']) t.throws(() => loadSettings({ CNS_PASSWORD_HASH_COST: bad }), { message: /CNS_PASSWORD_HASH_COST must be a whole number from 10 to 20/ });
  const server = await startTestServer({}, { CNS_PASSWORD_HASH_COST: '11' });
  t.teardown(() => server.stop());
  const user = await server.createUser('cost@example.com', 'password-123');
  const stored = await server.services.users.findById(user.id);
  t.is(stored!.password_hash.split('$')[1], '2048');
  t.is((await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status, 200);
  t.is((await server.api('POST', '/auth/login', { body: { email: 'cost@example.com', password: 'password-124' } })).status, 401);
  t.is((await server.api('POST', '/auth/login', { body: { email: 'nobody@example.com', password: 'password-123' } })).status, 401);
});
