import test from 'ava';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addOrgMember, createOrg, email } from './fixtures.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ baseUrl: 'https://cns.example.org' });
});
test.after.always(() => server.stop());

async function invite(token: string, orgId: string, to: string, role = 'member') {
  return server.api('POST', `/organizations/${orgId}/invite`, { token, body: { email: to, role } });
}

test('an invitation answers its token once with an accept URL; only the hash is stored', async (t) => {
  const owner = await server.createUser(email('io'));
  const orgId = await createOrg(server, owner.token);
  const to = email('guest');
  const res = await invite(owner.token, orgId, to, 'viewer');
  t.is(res.status, 201);
  const inv = res.body.data;
  t.like(inv, { org_id: orgId, email: to, role: 'viewer', invited_by: owner.id, accepted_at: null });
  t.regex(inv.token, /^cnsinv_[A-Za-z0-9_-]{40,}$/);
  t.is(inv.accept_url, `https://cns.example.org/api/v1/organizations/invitations/${inv.token}/accept`);
  t.true(Date.parse(inv.expires_at) > Date.now());

  const rows = await server.services.metadata.db.selectFrom('invitations').selectAll().where('id', '=', inv.id).execute();
  t.is(rows.length, 1);
  t.false(Object.values(rows[0]!).some((v) => typeof v === 'string' && v.includes(inv.token)));

  const pending = await server.api('GET', `/organizations/${orgId}/invitations`, { token: owner.token });
  t.is(pending.status, 200);
  t.is(pending.body.data.total, 1);
  t.is(pending.body.data.invitations[0].id, inv.id);
  t.false('token' in pending.body.data.invitations[0]);
  t.false('token_hash' in pending.body.data.invitations[0]);
});

test('accepting joins the invited user with the invited role; the token cannot be reused', async (t) => {
  const owner = await server.createUser(email('ao'));
  const orgId = await createOrg(server, owner.token);
  const guest = await server.createUser(email('ag'));
  const { token } = (await invite(owner.token, orgId, guest.email.toUpperCase(), 'admin')).body.data;

  const accepted = await server.api('POST', `/organizations/invitations/${token}/accept`, { token: guest.token });
  t.is(accepted.status, 200);
  t.like(accepted.body.data, { id: orgId, role: 'admin' });
  const members = await server.api('GET', `/organizations/${orgId}/members`, { token: guest.token });
  t.true(members.body.data.members.some((m: { user_id: string; role: string }) => m.user_id === guest.id && m.role === 'admin'));

  const again = await server.api('POST', `/organizations/invitations/${token}/accept`, { token: guest.token });
  t.is(again.status, 409);
  t.regex(again.body.message, /already been used/);
  const pending = await server.api('GET', `/organizations/${orgId}/invitations`, { token: owner.token });
  t.is(pending.body.data.total, 0);
});

test('an expired invitation is refused with a clear message and is not pending', async (t) => {
  const owner = await server.createUser(email('eo'));
  const orgId = await createOrg(server, owner.token);
  const guest = await server.createUser(email('eg'));
  const inv = (await invite(owner.token, orgId, guest.email)).body.data;
  await server.services.metadata.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', inv.id).execute();
  const res = await server.api('POST', `/organizations/invitations/${inv.token}/accept`, { token: guest.token });
  t.is(res.status, 409);
  t.regex(res.body.message, /expired/);
  t.is(res.body.error.details.reason, 'expired');
  t.is((await server.api('GET', `/organizations/${orgId}`, { token: guest.token })).status, 404);
  t.is((await server.api('GET', `/organizations/${orgId}/invitations`, { token: owner.token })).body.data.total, 0);
});

test('an unknown token is 404; another account cannot use someone else’s invitation', async (t) => {
  const owner = await server.createUser(email('uo'));
  const orgId = await createOrg(server, owner.token);
  const stranger = await server.createUser(email('us'));
  const unknown = await server.api('POST', '/organizations/invitations/cnsinv_nope/accept', { token: stranger.token });
  t.is(unknown.status, 404);
  const inv = (await invite(owner.token, orgId, email('someone-else'))).body.data;
  const wrong = await server.api('POST', `/organizations/invitations/${inv.token}/accept`, { token: stranger.token });
  t.is(wrong.status, 403);
  t.is((await server.api('GET', `/organizations/${orgId}/invitations`, { token: owner.token })).body.data.total, 1);
});

test('a new invitation to the same address replaces the pending one; members cannot be invited', async (t) => {
  const owner = await server.createUser(email('ro'));
  const orgId = await createOrg(server, owner.token);
  const guest = await server.createUser(email('rg'));
  const first = (await invite(owner.token, orgId, guest.email)).body.data;
  const second = (await invite(owner.token, orgId, guest.email, 'viewer')).body.data;
  t.is((await server.api('POST', `/organizations/invitations/${first.token}/accept`, { token: guest.token })).status, 404);
  const ok = await server.api('POST', `/organizations/invitations/${second.token}/accept`, { token: guest.token });
  t.is(ok.body.data.role, 'viewer');
  const dup = await invite(owner.token, orgId, guest.email);
  t.is(dup.status, 409);
});

test('who may invite: owners and admins; members and viewers get 403; bad input is 422', async (t) => {
  const owner = await server.createUser(email('wo'));
  const orgId = await createOrg(server, owner.token);
  const roles = ['admin', 'member', 'viewer'] as const;
  const expected = { admin: 201, member: 403, viewer: 403 };
  for (const role of roles) {
    const u = await server.createUser(email(`w${role}`));
    await addOrgMember(server, orgId, u.id, role);
    t.is((await invite(u.token, orgId, email('target'))).status, expected[role], role);
    t.is((await server.api('GET', `/organizations/${orgId}/invitations`, { token: u.token })).status, expected[role] === 201 ? 200 : 403);
  }
  const bad = await server.api('POST', `/organizations/${orgId}/invite`, { token: owner.token, body: { email: 'not-an-email', role: 'emperor' } });
  t.is(bad.status, 422);
  t.deepEqual(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['email', 'role']);
});
