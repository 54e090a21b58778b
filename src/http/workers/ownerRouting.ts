import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { AppError } from '../errors.ts';
import { parsesBodyOf } from '../middleware/bodyParser.ts';
import { CLIENT_IP_HEADER, FORWARD_SECRET_HEADER, forwardTo, workerTarget } from './forward.ts';
import { ForwardToOwner, NotOwnerError } from '../../cluster/notOwner.ts';
import { routeTarget } from '../../cluster/routeTarget.ts';
import type { WorkerOwnership } from '../../cluster/workerOwnership.ts';

/** What a worker adds to the app: the routing middleware and the mount's owner gate. */
export interface ClusterHooks {
  middleware: Middleware;
  gate: (ctx: Context, projectId: string) => void | Promise<void>;
  /** The gate also decides reads (cluster nodes: every request about a project runs on its primary). */
  gateReads?: boolean;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Sends each change of a project to the worker that owns it. A change whose address names the
 * project is forwarded before anything is read. Any other change keeps its JSON body (bounded
 * by the body limit) so that, once the route's declared check has found the project, the gate
 * can still forward it whole; the handler has not run then, so nothing is done twice. A read of
 * a route declared `onOwner` is sent on by the gate in the same way. Requests that arrive
 * forwarded are trusted for the client's address and never forwarded again.
 */
export function ownerRouting(d: { ownership: WorkerOwnership; secret: string; bodyLimitBytes: number }): ClusterHooks {
  const secret = Buffer.from(d.secret);
  const trusted = (req: IncomingMessage) => {
    const given = req.headers[FORWARD_SECRET_HEADER];
    if (typeof given !== 'string' || given.length !== d.secret.length) return false;
    const loopback = req.socket.remoteAddress === '127.0.0.1' || req.socket.remoteAddress === '::ffff:127.0.0.1';
    return loopback && timingSafeEqual(Buffer.from(given), secret);
  };

  const middleware: Middleware = async (ctx, next) => {
    if (ctx.req.headers[FORWARD_SECRET_HEADER] !== undefined) {
      if (!trusted(ctx.req)) throw new AppError('FORBIDDEN', 'A forwarded request needs the service’s own credentials.');
      const ip = ctx.req.headers[CLIENT_IP_HEADER];
      if (typeof ip === 'string' && ip !== '') ctx.request.ip = ip;
      ctx.state.forwarded = true;
      return next();
    }
    const target = routeTarget(ctx.method, ctx.path, ctx.querystring);
    if (target.change && target.project) {
      const owner = d.ownership.route(target.project);
      if (!owner.here) return forwardTo(ctx, workerTarget(owner.member.port, d.secret), ctx.req);
      return next();
    }
    const declared = Number(ctx.req.headers['content-length'] ?? NaN);
    if (target.change && parsesBodyOf(ctx.method, ctx.path) && JSON_TYPE.test(String(ctx.req.headers['content-type'] ?? '')) && !(declared > d.bodyLimitBytes)) {
      ctx.state.replayBody = await readBounded(ctx.req, d.bodyLimitBytes);
    }
    // Reads too: the gate sends a read of an `onOwner` route (an MCP session's event stream, a search index's state) to the owner.
    try {
      await next();
    } catch (err) {
      if (!(err instanceof ForwardToOwner)) throw err;
      const body: Buffer | Readable = (ctx.state.replayBody as Buffer | undefined) ?? ctx.req;
      await forwardTo(ctx, workerTarget(err.member.port, d.secret), body);
    }
  };

  const gate = (ctx: Context, projectId: string) => {
    const owner = d.ownership.route(projectId);
    if (owner.here) return;
    if (ctx.state.forwarded) throw new NotOwnerError(projectId);
    // A body already streamed to this worker (a multipart upload) cannot be sent on: such a
    // request runs here, and the content core's fence refuses any write of a project this
    // worker does not hold (queue-only routes, like a file submitted for ingestion, are fine).
    if (ctx.state.replayBody || !ctx.req.readableDidRead) throw new ForwardToOwner(projectId, owner.member);
  };

  return { middleware, gate };
}

/** The body's bytes, or a 413 beyond the limit (the same answer the JSON parser gives). */
export async function readBounded(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
