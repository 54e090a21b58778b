import { z } from 'zod';
import { userSchema } from '../presenters/user.ts';

export const loginBody = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
  session: z
    .enum(['bearer', 'cookie'])
    .default('bearer')
    .describe('`cookie` (the web dashboard): the tokens are set as HttpOnly cookies instead of being answered; writes then need X-CSRF-Token'),
});

export const signupBody = z.object({
  email: z.string().trim().email(),
  password: z.string().min(8, 'Passwords need at least 8 characters.').max(1024),
  display_name: z.string().trim().min(1).max(200).optional(),
});

export const refreshBody = z.object({
  refresh_token: z.string().min(1).max(512).optional().describe('left out by a cookie session, whose refresh token is the cns_refresh cookie'),
});

export const authConfig = z.object({
  realtime_url: z.string().describe('the live change feed (GET /events)'),
  anon_key: z.string().describe('identifies this deployment to realtime clients; grants nothing'),
});

export const tokens = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int().describe('seconds until the access token expires'),
  user: userSchema,
  user_email: z.string().describe('user.email, for PuppyOne clients'),
});

/** The answer of a cookie-session login or refresh: the tokens are in HttpOnly cookies, not here. */
export const cookieSession = z.object({
  token_type: z.literal('cookie').describe('the tokens were set as HttpOnly cookies (cns_access, cns_refresh) with the readable cns_csrf'),
  expires_in: z.number().int().describe('seconds until the access token expires: refresh before'),
  user: userSchema,
});

export const session = z.union([tokens, cookieSession]);

export const me = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('user'),
    user: userSchema,
    expires_in: z.number().int().optional().describe("with a session cookie: seconds until its access token expires"),
  }),
  z.object({
    kind: z.literal('key'),
    connection: z.object({
      id: z.string(),
      name: z.string(),
      kind: z.enum(['api', 'agent', 'mcp', 'sandbox', 'sync']),
      project_id: z.string(),
      scope_path: z.string(),
      mode: z.enum(['read', 'read_write']),
    }),
  }),
]);
