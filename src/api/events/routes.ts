import Router from '@koa/router';
import { z } from 'zod';
import type { Services } from '../../app/services.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput } from '../../http/validate.ts';

const eventsQuery = z.object({
  project_id: z.string().min(1).max(100),
  /** For clients that cannot set headers; the Last-Event-ID header wins. */
  last_event_id: z.coerce.number().int().min(0).optional(),
});

/**
 * `GET /events?project_id=` — the live change feed as Server-Sent Events (`GET /auth/config`
 * advertises it as `realtime_url`). Authenticated like every route; an access key sees only
 * changes inside its scope. Events (each `data` a JSON object whose `type` is the event name):
 * - `change`, id = the project commit number: project_version, commit_id, actor, message,
 *   created_at, changes [{node_id, path, old_path, operation, node_type, version}];
 * - `ready` once connected, after replaying what followed `Last-Event-ID`;
 * - `resync` when the consumer fell too far behind; the stream then ends and the consumer
 *   catches up with `GET /sync/changelog` from its last event id.
 * Comment lines (`: keep-alive`) are heartbeats.
 */
export function eventRoutes(s: Services): Router {
  const router = new Router();

  router.get('/events', (ctx) => {
    const q = parseInput(eventsQuery, ctx.query, 'query');
    const header = ctx.get('Last-Event-ID');
    const fromHeader = /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
    const access = s.authorizer.requireProject(principalOf(ctx), q.project_id, 'content:read');
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
    s.feed.attach(ctx.res, { projectId: access.project.id, scope: access.scope, lastEventId: fromHeader ?? q.last_event_id ?? null });
  });

  return router;
}
