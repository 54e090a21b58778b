import Router from '@koa/router';
import { createHmac } from 'node:crypto';
import type { Services } from '../../app/services.ts';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../../auth/passwords.ts';
import type { UserRecord } from '../../domain/users/userStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { AppError, forbidden } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput } from '../../http/validate.ts';
import { presentUser } from './presenter.ts';
import { loginBody, refreshBody, signupBody } from './schemas.ts';

export function authRoutes(s: Services): Router {
  const router = new Router();

  async function issueTokens(user: UserRecord, refreshToken?: string) {
    return {
      access_token: await s.accessTokens.sign(user.id),
      refresh_token: refreshToken ?? s.refreshTokens.issue(user.id),
      token_type: 'bearer',
      expires_in: s.accessTokens.ttlSeconds,
      user: presentUser(user),
    };
  }

  router.get('/auth/config', (ctx) => {
    // The anonymous key is public by design: it identifies this deployment to realtime clients and grants nothing.
    const anonKey = 'cns_anon_' + createHmac('sha256', s.signingSecret).update('anon').digest('base64url').slice(0, 24);
    ok(ctx, { realtime_url: `${s.settings.baseUrl}/api/v1/events`, anon_key: anonKey });
  });

  router.post('/auth/login', async (ctx) => {
    const body = parseInput(loginBody, ctx.request.body, 'body');
    const retryAfter = s.loginRateLimiter.take(`${ctx.ip}:${body.email.toLowerCase()}`);
    if (retryAfter > 0) {
      throw new AppError('RATE_LIMITED', `Too many login attempts; retry in ${retryAfter} s.`, { retry_after: retryAfter }, {
        'Retry-After': String(retryAfter),
      });
    }
    const user = s.users.findByEmail(body.email);
    const valid = await verifyPassword(body.password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
    if (!user || !valid) throw new AppError('UNAUTHORIZED', 'The email or password is incorrect.');
    ok(ctx, await issueTokens(user), 'Signed in');
  });

  router.post('/auth/refresh', async (ctx) => {
    const body = parseInput(refreshBody, ctx.request.body, 'body');
    const result = s.refreshTokens.rotate(body.refresh_token);
    if (!result.ok) {
      const why =
        result.reason === 'reused'
          ? 'This refresh token was already used; every token of its sign-in has been revoked. Sign in again.'
          : `The refresh token is ${result.reason === 'unknown' ? 'not valid' : result.reason}.`;
      throw new AppError('UNAUTHORIZED', why, { reason: result.reason });
    }
    const user = s.users.findById(result.userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'The refresh token is not valid.');
    ok(ctx, await issueTokens(user, result.token), 'Token refreshed');
  });

  router.post('/auth/logout', (ctx) => {
    const body = parseInput(refreshBody, ctx.request.body, 'body');
    s.refreshTokens.revoke(body.refresh_token);
    ok(ctx, { revoked: true }, 'Signed out');
  });

  router.post('/auth/signup', async (ctx) => {
    if (!s.settings.signupOpen) throw forbidden('Sign-up is closed on this server; ask an administrator for an account.');
    const body = parseInput(signupBody, ctx.request.body, 'body');
    const user = await s.users.create({ email: body.email, password: body.password, displayName: body.display_name });
    created(ctx, await issueTokens(user), 'Account created');
  });

  router.get('/auth/me', (ctx) => {
    const principal = principalOf(ctx);
    if (principal.kind === 'user') ok(ctx, { kind: 'user', user: presentUser(principal.user) });
    else {
      const c = principal.connection;
      ok(ctx, { kind: 'key', connection: { id: c.id, name: c.name, kind: c.kind, project_id: c.project_id, scope_path: c.scope_path, mode: c.mode } });
    }
  });

  return router;
}
