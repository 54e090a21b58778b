import type { Context, Middleware } from 'koa';
import { join } from 'node:path';
import { actorOf, type Principal } from '../auth/principal.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Settings } from '../config/settings.ts';
import type { Actor, ContentStore } from '../content/contentStore.ts';
import { callerKey } from '../http/middleware/rateLimit.ts';
import type { RateLimiter } from '../http/rateLimiter.ts';
import type { Logger } from '../logging/logger.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { gitRefusal } from './gitAccess.ts';
import { gitToken } from './gitCredentials.ts';
import { runHttpBackend } from './httpBackend.ts';
import { HOOK_PATH, hookUrl } from './hookUrl.ts';
import { answerPreReceive } from './preReceiveEndpoint.ts';
import { answerProcReceive, PROC_RECEIVE_PATH } from './procReceiveEndpoint.ts';
import { PushSessions, type PushSession } from './pushSessions.ts';
import { parseSmartRequest, type SmartRequest } from './smartHttp.ts';

export const GIT_PREFIX = '/git/';

/**
 * `{server}/git/<project_id>.git`: every project is a git remote served by the system
 * `git http-backend`. Mounted before the JSON body parser (packs stay raw streams) and before
 * the API's bearer authentication: git authenticates its own way (HTTP Basic with the token as
 * password, or Bearer) and needs a `WWW-Authenticate: Basic` challenge to ask its credential
 * helper. Answers are plain text, which git shows to the user as `remote: ...`.
 */
/** What the git remote uses: the settings it reads, credentials, the content policy, the core and the rate limiter. */
export interface GitRemoteDeps {
  settings: Pick<Settings, 'dataDir' | 'baseUrl' | 'maxContentBytes'>;
  logger: Logger;
  authenticator: Authenticator;
  access: ContentAccess;
  content: ContentStore;
  rateLimiter: RateLimiter;
  /** A cluster node: throws unless this node writes the project now (a push routed here by a stale placement is refused). */
  mayWrite?: (projectId: string) => Promise<void>;
}

export function gitRemote(s: GitRemoteDeps): Middleware {
  const sessions = new PushSessions();
  const validator = { authenticator: s.authenticator, access: s.access, maxContentBytes: s.settings.maxContentBytes };
  return async (ctx, next) => {
    if (!ctx.path.startsWith(GIT_PREFIX)) return next();
    if (ctx.path === HOOK_PATH && ctx.method === 'POST') return answerPreReceive(ctx, sessions, validator, s.logger);
    if (ctx.path === PROC_RECEIVE_PATH && ctx.method === 'POST') return answerProcReceive(ctx, sessions, s.content, s.logger);
    const request = parseSmartRequest(ctx.method, ctx.path, ctx.query.service);
    if (!request) return plain(ctx, 404, `Not a git request. Clone ${s.settings.baseUrl}/git/<project_id>.git with git.`);

    const token = gitToken(ctx.get('authorization') || undefined);
    const principal = token ? await s.authenticator.authenticate(token) : null;
    if (!token || !principal) {
      ctx.set('WWW-Authenticate', 'Basic realm="cns"');
      return plain(
        ctx,
        401,
        token
          ? 'The credential is invalid, expired or revoked.'
          : 'Authentication required: use `cns git-credential` as credential helper, or put a token in the URL.',
      );
    }
    ctx.state.principal = principal;
    const retryAfter = s.rateLimiter.take(callerKey(ctx));
    if (retryAfter > 0) {
      ctx.set('Retry-After', String(retryAfter));
      return plain(ctx, 429, `Too many requests; retry in ${retryAfter} s.`);
    }
    const refused = await gitRefusal(s.access, principal, request.projectId, request.action);
    if (refused) return plain(ctx, refused.status, refused.message);
    if (request.action === 'content:write' && s.mayWrite) {
      try {
        await s.mayWrite(request.projectId);
      } catch (err) {
        ctx.set('Retry-After', '1');
        return plain(ctx, 503, (err as Error).message);
      }
    }
    await serve(s, sessions, ctx, request, token, principal);
  };
}

async function serve(s: GitRemoteDeps, sessions: PushSessions, ctx: Context, r: SmartRequest, token: string, principal: Principal): Promise<void> {
  const gitdir = join(s.settings.dataDir, `${r.projectId}.git`);
  const actor = actorOf(principal);
  const receivedAt = new Date().toISOString();
  const session: PushSession | null = r.isPush ? { projectId: r.projectId, gitdir, token, actor } : null;
  if (session) {
    // From the moment main may move, whichever path indexes the pushed commits first (this
    // request's sync below, or an API write that finds main moved) attributes them to the pusher.
    session.onAccept = (a) => s.content.expectPush(r.projectId, { ...a, actor, receivedAt, keepCommitAuthor: true });
  }
  const secret = session ? sessions.start(session) : null;
  const env: Record<string, string> = secret ? { CNS_PUSH_SECRET: secret, CNS_HOOK_URL: hookUrl(ctx.req.socket), CNS_NODE: process.execPath } : {};
  let run: Awaited<ReturnType<typeof runHttpBackend>>;
  try {
    run = await runHttpBackend({
      projectRoot: s.settings.dataDir,
      pathInfo: r.pathInfo,
      req: ctx.req,
      queryString: ctx.querystring,
      remoteUser: actor.author,
      env,
    });
  } catch (e) {
    if (secret) sessions.end(secret);
    throw e;
  }
  ctx.status = run.status;
  for (const [k, v] of run.headers) ctx.set(k, v);
  run.body.on('error', () => undefined);
  ctx.body = run.body;
  // A fetch whose client went away is abandoned; a push runs to its end (its refs may be moving).
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished && !r.isPush) run.child.kill('SIGTERM');
  });
  // The reply ends only once the push is indexed, so that `git push` returning means the
  // versions exist. A crash before that leaves the work to the start-up reconciler.
  void run.exited.then(async (code) => {
    try {
      if (code !== 0) s.logger.warn({ project_id: r.projectId, code, stderr: run.stderr() }, 'git http-backend failed');
      if (session) await indexPush(s, session, actor, receivedAt);
    } catch (err) {
      s.logger.error({ err, project_id: r.projectId }, 'indexing a push failed; the reconciler will retry at start-up');
      // On a cluster, a push no quorum of copies holds is not acknowledged: git reports it as failed
      // (a failure only to index stays a success: the commits are on disk and indexed later).
      if (session && (err as { code?: string }).code === 'SERVICE_UNAVAILABLE') run.body.destroy(err as Error);
    } finally {
      if (secret) sessions.end(secret);
      if (!run.body.destroyed) run.body.end();
    }
  });
}

/**
 * Indexes what the push brought: the store attributes the commits of the accepted push (actor =
 * the pusher, author text = the commit's author, created_at = when the push arrived) and records
 * the push in the audit log when it indexes the accepted tip (consuming its registration). A push
 * still registered after a successful sync did not move main (refused by git after the hook, e.g.
 * a lost ref race) and is forgotten. When the sync fails the registration stays in the database,
 * so the next write or the start-up reconciler still attributes the commits to the pusher.
 */
async function indexPush(s: GitRemoteDeps, session: PushSession, actor: Actor, receivedAt: string): Promise<void> {
  await s.content.reconcile(session.projectId, { actor, receivedAt, keepCommitAuthor: true, pushed: true });
  if (session.accepted) s.content.forgetPush(session.projectId, session.accepted.after);
}

function plain(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = message + '\n';
}
