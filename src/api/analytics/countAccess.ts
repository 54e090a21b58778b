import type { Context, Middleware } from 'koa';
import type { AccessCounter, ApiHit } from '../../analytics/accessCounter.ts';
import type { Principal } from '../../auth/principal.ts';

/**
 * Counts every authenticated API request (mounted right after authentication): per connection
 * for access keys (agents, MCP endpoints, sandboxes, syncs, api keys), and per node when the route
 * names one. Its cost on a request is a Map increment; the counter writes in batches. A user's
 * request counts against the project or node it named, once it succeeded (a failed one may name
 * anything). Public views are counted by their route, which is served before authentication.
 */
export function countAccess(counter: AccessCounter): Middleware {
  if (!counter.enabled) return (_ctx, next) => next();
  return async (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (!principal) return next();
    const at = Date.now();
    let succeeded = false;
    let elsewhere = false;
    try {
      await next();
      // The response's own status: routes that answer by themselves (MCP, ctx.respond = false) leave Koa's at 404.
      succeeded = ctx.res.statusCode < 400;
    } catch (err) {
      // Several workers: the request runs on the project's owner, which counts it.
      elsewhere = typeof err === 'object' && err !== null && 'countedElsewhere' in err;
      throw err;
    } finally {
      if (!elsewhere) counter.apiCall(hitOf(ctx, principal, succeeded), at);
    }
  };
}

function hitOf(ctx: Context, principal: Principal, succeeded: boolean): ApiHit {
  const key = principal.kind === 'key' ? principal.connection : null;
  const projectId = key ? key.project_id : succeeded ? projectNamed(ctx) : null;
  return { projectId, connectionId: key?.id ?? '', node: succeeded ? nodeNamed(ctx) : null };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The project a request named: in its path, or as project_id in its query or body. */
function projectNamed(ctx: Context): string | null {
  const params = (ctx.params ?? {}) as Record<string, unknown>;
  const body = ctx.request.body as Record<string, unknown> | undefined;
  return text(params.projectId) ?? text(params.project_id) ?? text(ctx.query.project_id) ?? text(body?.project_id);
}

/** The node a request named: by id (in its path, query or body), or by `path` on a project's path-addressed routes. */
function nodeNamed(ctx: Context): ApiHit['node'] {
  const params = (ctx.params ?? {}) as Record<string, unknown>;
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const id = text(params.nodeId) ?? text(params.node_id) ?? text(ctx.query.node_id) ?? text(body?.node_id);
  if (id) return { id };
  if (!text(params.projectId)) return null;
  const path = text(ctx.query.path) ?? text(body?.path);
  return path ? { path } : null;
}
