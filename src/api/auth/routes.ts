import { z } from 'zod';
import { anonKeyOf } from '../../auth/anonKey.ts';
import type { Settings } from '../../config/settings.ts';
import type { UserRecord, UserStore } from '../../domain/users/userStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { AppError, forbidden } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { cookieSessionOf } from '../../http/middleware/cookieSession.ts';
import type { RateLimiter } from '../../http/rateLimiter.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { presentUser } from '../presenters/user.ts';
import { cookieSessions, type CookieSessionDeps } from './cookieSession.ts';
import * as schema from './schemas.ts';

export interface AuthRouteDeps extends CookieSessionDeps {
  settings: Pick<Settings, 'baseUrl' | 'signupOpen'>;
  /** The anon key of GET /auth/config is derived from it. */
  signingSecret: Uint8Array;
  users: Pick<UserStore, 'findByEmail' | 'findById' | 'create' | 'signIn'>;
  loginRateLimiter: RateLimiter;
  loginAddressRateLimiter: RateLimiter;
}

/**
 * Sign-in, tokens and "who am I" (spec 4.4). All but /auth/me are public: they are how a caller gets a credential.
 * Bearer clients get their tokens in the answer; the web dashboard signs in with
 * `session: "cookie"` and gets them as HttpOnly cookies instead (./cookieSession.ts).
 */
export function authRoutes(s: AuthRouteDeps): RouteGroup {
  async function issueTokens(user: UserRecord, refreshToken?: string) {
    return {
      access_token: await s.accessTokens.sign(user.id),
      refresh_token: refreshToken ?? (await s.refreshTokens.issue(user.id)),
      token_type: 'bearer' as const,
      expires_in: s.accessTokens.ttlSeconds,
      user: presentUser(user),
      user_email: user.email, // PuppyOne's clients read the signed-in address here
    };
  }

  /** Each refresh token works once: its successor, or 401 saying why not. */
  async function rotate(token: string) {
    const result = await s.refreshTokens.rotate(token);
    if (!result.ok) {
      const why =
        result.reason === 'reused'
          ? 'This refresh token was already used; every token of its sign-in has been revoked. Sign in again.'
          : `The refresh token is ${result.reason === 'unknown' ? 'not valid' : result.reason}.`;
      throw new AppError('UNAUTHORIZED', why, { reason: result.reason });
    }
    const user = await s.users.findById(result.userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'The refresh token is not valid.');
    return { user, token: result.token, sessionId: result.familyId };
  }

  const cookies = cookieSessions(s, rotate);

  return {
    prefix: '/auth',
    tag: 'Auth',
    routes: [
      route({
        method: 'get',
        path: '/config',
        summary: "This deployment's realtime address and public anon key",
        description: 'Public by design: the anon key identifies this deployment to realtime clients and grants nothing.',
        authorize: { public: 'the anon key identifies this deployment to realtime clients and grants nothing' },
        response: schema.authConfig,
        handle(ctx) {
          ok(ctx, { realtime_url: `${s.settings.baseUrl}/api/v1/events`, anon_key: anonKeyOf(s.signingSecret) });
        },
      }),
      route({
        method: 'post',
        path: '/login',
        summary: 'Sign in with email and password (rate limited: 429 with Retry-After)',
        description:
          'With `session: "cookie"` (the web dashboard) the tokens are not answered but set as cookies, all `SameSite=Strict` (and `Secure` over https): ' +
          '`cns_access` (HttpOnly, `Path=/api`) authenticates requests without an Authorization header, `cns_refresh` (HttpOnly, `Path=/api/v1/auth`) ' +
          'is read by refresh and logout, and the readable `cns_csrf` must be echoed in `X-CSRF-Token` by every request other than GET, HEAD and OPTIONS ' +
          '(else 403). Bearer clients are unaffected.',
        authorize: { public: 'signing in is how a caller gets a credential' },
        body: schema.loginBody,
        response: schema.session,
        async handle(ctx, { body }) {
          // Per address and email, and per address whatever the email: varying the email must not buy more scrypt work.
          const retryAfter = Math.max(s.loginAddressRateLimiter.take(ctx.ip), s.loginRateLimiter.take(`${ctx.ip}:${body.email.toLowerCase()}`));
          if (retryAfter > 0) {
            throw new AppError('RATE_LIMITED', `Too many login attempts; retry in ${retryAfter} s.`, { retry_after: retryAfter }, {
              'Retry-After': String(retryAfter),
            });
          }
          const user = await s.users.signIn(body.email, body.password);
          if (!user) throw new AppError('UNAUTHORIZED', 'The email or password is incorrect.');
          ok(ctx, body.session === 'cookie' ? await cookies.start(ctx, user) : await issueTokens(user), 'Signed in');
        },
      }),
      route({
        method: 'post',
        path: '/refresh',
        summary: 'Exchange a refresh token for new tokens (each refresh token works once)',
        description: 'Without `refresh_token`, the cookie session is refreshed: both cookies are rotated (the request needs `X-CSRF-Token`).',
        authorize: { public: 'the refresh token (in the body or the session cookie) is the credential' },
        body: schema.refreshBody,
        response: schema.session,
        async handle(ctx, { body }) {
          if (body.refresh_token === undefined) return ok(ctx, await cookies.refresh(ctx), 'Session refreshed');
          const next = await rotate(body.refresh_token);
          ok(ctx, await issueTokens(next.user, next.token), 'Token refreshed');
        },
      }),
      route({
        method: 'post',
        path: '/logout',
        summary: 'Revoke a refresh token',
        description: 'Without `refresh_token`, ends the cookie session: revoked (its access cookie stops working at once) and the cookies cleared (needs `X-CSRF-Token`).',
        authorize: { public: 'the refresh token (in the body or the session cookie) is the credential it revokes' },
        body: schema.refreshBody,
        response: z.object({ revoked: z.literal(true) }),
        async handle(ctx, { body }) {
          if (body.refresh_token === undefined) await cookies.end(ctx);
          else await s.refreshTokens.revoke(body.refresh_token);
          ok(ctx, { revoked: true }, 'Signed out');
        },
      }),
      route({
        method: 'post',
        path: '/signup',
        summary: 'Create an account (403 when sign-up is closed on this server)',
        authorize: { public: 'creates the account a caller then signs in with (403 while sign-up is closed)' },
        status: 201,
        body: schema.signupBody,
        response: schema.tokens,
        async handle(ctx, { body }) {
          if (!s.settings.signupOpen) throw forbidden('Sign-up is closed on this server; ask an administrator for an account.');
          const user = await s.users.create({ email: body.email, password: body.password, displayName: body.display_name });
          created(ctx, await issueTokens(user), 'Account created');
        },
      }),
      route({
        method: 'get',
        path: '/me',
        summary: 'The caller: a signed-in user, or an access key with its project, scope and mode',
        authorize: { signedIn: 'answers who the caller is, user or key' },
        response: schema.me,
        handle(ctx) {
          const principal = principalOf(ctx);
          const session = cookieSessionOf(ctx);
          const expiresIn = session ? { expires_in: Math.max(0, Math.floor((session.expiresAtMs - Date.now()) / 1000)) } : {};
          if (principal.kind === 'user') ok(ctx, { kind: 'user', user: presentUser(principal.user), ...expiresIn });
          else {
            const c = principal.connection;
            ok(ctx, { kind: 'key', connection: { id: c.id, name: c.name, kind: c.kind, project_id: c.project_id, scope_path: c.scope_path, mode: c.mode } });
          }
        },
      }),
    ],
  };
}
