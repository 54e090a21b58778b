import type { Context, Middleware } from 'koa';
import type { AccessCounter } from '../../analytics/accessCounter.ts';
import { API_PREFIX } from '../../config/apiPrefix.ts';
import { sendSource } from '../../http/byteRange.ts';
import { callerKey, rateLimit } from '../../http/middleware/rateLimit.ts';
import type { RateLimiter } from '../../http/rateLimiter.ts';
import { mountGroup, type RouteGuards } from '../../http/routes/mount.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { PublicAnswer, PublicReader } from '../../publish/publicReader.ts';
import { publicNotFound, subPathSegments, type PublicResolver } from '../../publish/publicTarget.ts';
import * as schema from './schemas.ts';

const PUBLIC_BASE = `${API_PREFIX}/p`;

const description =
  'No credential. Not an envelope: markdown is a sanitized HTML page (`?format=md`: the text), json the document (`?pointer=`: one member, RFC 6901), ' +
  'a file its bytes (Content-Type, Content-Disposition, Range), a folder an index page whose links stay under the same address (`?format=json`: the tree); ' +
  '`/p/{key}/{path}` reaches what lies beneath a published folder, and only that. ETag and Cache-Control (60 s for the latest version, an hour for a pinned one); ' +
  'If-None-Match answers 304. A disabled, expired or deleted publish, a node that is gone and a path outside the published folder are all the same 404. ' +
  'Other query parameters (utm_… and the like) are ignored: they do not change what is served.';

export interface PublicPublishDeps {
  publishing: { resolver: PublicResolver; reader: PublicReader };
  /** Each page served counts as one view. */
  analytics: { counter: Pick<AccessCounter, 'view'> };
}

/**
 * The public address of a publish (spec 4.10, "public, no authentication"). Every answer carries a strict Content-Security-Policy: nothing
 * served here can run a script on this origin. Each served answer counts as one view.
 */
export function publicPublishRoutes(s: PublicPublishDeps): RouteGroup {
  async function serve(ctx: Context, query: { format?: 'html' | 'md' | 'json'; pointer?: string }): Promise<void> {
    const { address, rest } = splitAddress(ctx.path);
    if (address === null) throw publicNotFound();
    const target = await s.publishing.resolver.resolve(address, subPathSegments(rest));
    const answer = await s.publishing.reader.answer(target, { format: query.format, pointer: query.pointer, address, base: PUBLIC_BASE });
    send(ctx, answer, target.publish.version !== null && target.relPath === '');
    if (ctx.status < 400) {
      s.analytics.counter.view({
        projectId: target.publish.project_id,
        publishId: target.publish.id,
        nodeId: target.node.id,
        address: ctx.ip,
        userAgent: ctx.get('User-Agent'),
      });
    }
  }

  const common = {
    method: 'get' as const,
    description,
    authorize: { public: 'a publish makes its node readable by anyone who has the address' },
    params: schema.publicParams,
    query: schema.publicQuery,
    streams: 'application/octet-stream' as const,
  };
  return {
    // Mounted by the app ahead of the API's credential chain (publicPublishing below), documented at its full path.
    prefix: PUBLIC_BASE,
    server: '/',
    tag: 'Publishing',
    routes: [
      route({ ...common, path: '/:key', summary: 'A published node, without a credential', handle: (ctx, { query }) => serve(ctx, query) }),
      route({ ...common, path: '/:key/*path', summary: 'A node beneath a published folder, without a credential', handle: (ctx, { query }) => serve(ctx, query) }),
    ],
  };
}

/**
 * The public addresses as one middleware the app mounts before authentication, body parsing and
 * the API's router, as it does /healthz: a public page needs none of them, and a page served
 * from memory should cost little more than the trivial route (issue 18, figure 1). Anonymous
 * callers keep the per-address rate limit every anonymous request has.
 */
export function publicPublishing(s: PublicPublishDeps & { rateLimiter: RateLimiter }, guards: RouteGuards): Middleware {
  const routes = mountGroup(publicPublishRoutes(s), guards).routes() as Middleware;
  const limit = rateLimit(s.rateLimiter, callerKey);
  return (ctx, next) => (ctx.path.startsWith(`${PUBLIC_BASE}/`) ? limit(ctx, () => routes(ctx, next)) : next());
}

/** The address (key or slug, decoded) and the raw rest of the path after it. */
function splitAddress(path: string): { address: string | null; rest: string } {
  const after = path.slice(PUBLIC_BASE.length + 1);
  const slash = after.indexOf('/');
  const raw = slash === -1 ? after : after.slice(0, slash);
  try {
    return { address: decodeURIComponent(raw), rest: slash === -1 ? '' : after.slice(slash) };
  } catch {
    return { address: null, rest: '' };
  }
}

function send(ctx: Context, answer: PublicAnswer, pinned: boolean): void {
  ctx.set('Content-Security-Policy', answer.csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Access-Control-Allow-Origin', '*');
  const cacheControl = pinned ? 'public, max-age=3600' : 'public, max-age=60';
  if (answer.kind === 'file') {
    sendSource(ctx, { size: answer.size, slice: answer.slice }, { etag: answer.etag, contentType: answer.contentType, filename: answer.filename, disposition: answer.disposition });
    ctx.set('Cache-Control', cacheControl);
    return;
  }
  const etag = `"${answer.etag}"`;
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', cacheControl);
  if (matches(ctx.get('If-None-Match'), etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = answer.contentType;
  ctx.body = answer.body;
}

/** If-None-Match: `*`, or a list of tags (weak ones compare by their opaque part, RFC 9110 13.1.2). */
function matches(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
