import type { Middleware } from 'koa';
import { z } from 'zod';
import { anonKeyOf } from '../../auth/anonKey.ts';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { ChangeBus } from '../../events/changeBus.ts';
import type { ChangeFeed } from '../../events/changeFeed.ts';
import { AppError } from '../../http/errors.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';

const eventsQuery = z.object({
  project_id: z.string().min(1).max(100),
  /** For clients that cannot set headers; the Last-Event-ID header wins. */
  last_event_id: z.coerce.number().int().min(0).optional(),
  /** The deployment's anon_key (GET /auth/config), for clients that cannot set headers; the apikey header wins. */
  apikey: z.string().max(200).optional(),
});

/** The stream's contract, as the OpenAPI document states it (the answer is not the envelope). */
const streamDescription = `The answer is a \`text/event-stream\`, not the envelope. Authenticated like every route; an access key sees only changes inside its scope.

Events (each \`data\` a JSON object whose \`type\` is the event name):
- \`change\`, id = the project commit number: project_version, commit_id, actor, message, created_at, changes [{node_id, path, old_path, operation, node_type, version}];
- \`ready\` once connected, after replaying what followed \`Last-Event-ID\` (header, or \`last_event_id\`; the header wins);
- \`resync\` when the consumer fell too far behind; the stream then ends and the consumer catches up with \`GET /sync/changelog\` from its last event id;
- \`revoked\` when access ended (key revoked or deleted, member removed, project deleted): access is re-checked at once after requests that change keys or memberships, before fan-outs (at most once a second) and at heartbeats, and the stream then ends.

Comment lines (\`: keep-alive\`) are heartbeats. A client may also send the \`anon_key\` of \`GET /auth/config\` as \`apikey\` (header or query) to make sure it reached the deployment it was configured for: another value is 401. It never replaces the credential. One credential holds at most CNS_MAX_EVENT_STREAMS open streams; one more is 429.`;

export interface EventRouteDeps {
  /** The anon key a client may send as `apikey` is derived from it. */
  signingSecret: Uint8Array;
  feed: ChangeFeed;
  /** An open stream re-checks the credential and its access as they stand now. */
  authenticator: Pick<Authenticator, 'current'>;
  access: Pick<ContentAccess, 'grant'>;
}

/**
 * `GET /events?project_id=` — the live change feed as Server-Sent Events (`GET /auth/config`
 * advertises it as `realtime_url`). The answer is a stream, not the envelope: its description in
 * the OpenAPI document (`streamDescription`) lists the events.
 */
export function eventRoutes(s: EventRouteDeps): RouteGroup {
  return {
    prefix: '',
    tag: 'Events',
    routes: [
      route({
        method: 'get',
        path: '/events',
        summary: 'The live change feed of a project, as Server-Sent Events (text/event-stream)',
        description: streamDescription,
        streams: 'text/event-stream',
        permission: 'content:read',
        authorize: { content: ({ query }) => query.project_id },
        query: eventsQuery,
        handle(ctx, { query: q, access: grant }) {
          const header = ctx.get('Last-Event-ID');
          const fromHeader = /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
          const apikey = ctx.get('apikey') || q.apikey;
          if (apikey !== undefined && apikey !== '' && apikey !== anonKeyOf(s.signingSecret)) {
            throw new AppError('UNAUTHORIZED', 'The apikey is not the anon_key of this server (GET /auth/config): this client is configured for another deployment.');
          }
          const { principal } = grant;
          const holder = `${principal.kind}:${principal.id}`;
          if (!s.feed.mayOpen(holder)) {
            throw new AppError('RATE_LIMITED', `This credential already holds ${s.feed.streamCap} open event streams; close one first.`, {
              open_streams: s.feed.streamCap,
            }, { 'Retry-After': '5' });
          }
          const projectId = grant.projectId;
          // The credential and its access as they stand at each check, not as they were when the stream
          // opened. Run by the feed's fan-outs and heartbeats, outside any metadata transaction.
          const check = async () => {
            const now = await s.authenticator.current(principal);
            return now ? (await s.access.grant(now, projectId, 'content:read')).scope : null;
          };
          ctx.respond = false;
          ctx.req.socket.setTimeout(0);
          ctx.req.socket.setNoDelay(true);
          ctx.res.writeHead(200, {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache, no-transform',
            // The connection belongs to the stream: when the stream ends (shutdown, resync) it closes too.
            connection: 'close',
            'x-accel-buffering': 'no',
          });
          ctx.res.write('retry: 1000\n\n');
          s.feed.attach(ctx.res, { projectId, scope: grant.scope, lastEventId: fromHeader ?? q.last_event_id ?? null, holder, check });
        },
      }),
    ],
  };
}

/** Requests that can end someone's access: keys (and sync keys), members, organizations, project deletion. */
const accessChanging =
  /^\/api\/v1\/(connections|access|organizations)(\/|$)|^\/api\/v1\/sync\/syncs\/[^/]+\/?$|^\/api\/v1\/projects\/[^/]+(\/members(\/|$)|\/?$)/;

/** The project a request's path names, '' when none (an organization, a key by id). */
const projectOfPath = (path: string) => /^\/api\/v1\/projects\/([^/]+)/.exec(path)?.[1] ?? '';

/**
 * After a successful request that may have changed credentials or memberships, every open
 * stream re-checks its access at once, in every worker: the box-wide signal 'access-changed'
 * reaches this process's feed too (services.ts). Streams also re-check before each event and
 * at heartbeats.
 */
export function feedAccessWatch(s: { bus: Pick<ChangeBus, 'signal'> }): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.status < 400 && accessChanging.test(ctx.path)) {
      s.bus.signal({ kind: 'access-changed', project: projectOfPath(ctx.path) });
    }
  };
}
