import test from 'ava';
import { RefreshTokens } from '../../src/auth/refreshTokens.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

// The auth domain's stores on both engines (issue 30): sign-ins (refresh tokens) so far.

for (const engine of ENGINES) {
  test(`${engine}: a refresh token works once; presented again, its whole sign-in is revoked`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const tokens = new RefreshTokens(metadata, 3600);
    const first = await tokens.issue('usr_1', 'rtf_a');
    t.is(await tokens.familyOf(first), 'rtf_a');
    t.true(await tokens.isLive('rtf_a'));
    const next = await tokens.rotate(first);
    if (!next.ok) return t.fail(next.reason);
    t.like(next, { userId: 'usr_1', familyId: 'rtf_a' });
    t.not(next.token, first);
    t.like(await tokens.rotate(first), { ok: false, reason: 'reused' });
    t.false(await tokens.isLive('rtf_a'), 'a reuse revokes the sign-in at once');
    t.like(await tokens.rotate(next.token), { ok: false, reason: 'revoked' }, 'its newest token too');
    t.like(await tokens.rotate('cnsr_unknown'), { ok: false, reason: 'unknown' });
    t.is(await tokens.familyOf('cnsr_unknown'), null);
    t.false(await tokens.revoke('cnsr_unknown'));
  });

  test(`${engine}: an expired token is refused; logout revokes a live sign-in`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const expired = await new RefreshTokens(metadata, -1).issue('usr_1', 'rtf_old');
    const tokens = new RefreshTokens(metadata, 3600);
    t.like(await tokens.rotate(expired), { ok: false, reason: 'expired' });
    const live = await tokens.issue('usr_1', 'rtf_b');
    t.true(await tokens.isLive('rtf_b'));
    t.true(await tokens.revoke(live));
    t.false(await tokens.isLive('rtf_b'));
    t.like(await tokens.rotate(live), { ok: false, reason: 'revoked' });
  });

  test(`${engine}: the same token presented twice at once: one successor, the other a reuse`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const tokens = new RefreshTokens(metadata, 3600);
    const token = await tokens.issue('usr_1', 'rtf_c');
    const results = await Promise.all([tokens.rotate(token), tokens.rotate(token), tokens.rotate(token)]);
    t.is(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
    // The first loser finds a reuse and revokes the sign-in; a later one may find it revoked already.
    const refused = results.flatMap((r) => (r.ok ? [] : [r.reason]));
    t.true(refused.includes('reused') && refused.every((why) => why === 'reused' || why === 'revoked'), refused.join(', '));
    t.false(await tokens.isLive('rtf_c'), 'the reuse revoked the sign-in, successor included');
  });
}
