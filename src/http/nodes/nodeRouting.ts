import type { Context, Middleware } from 'koa';
import type { Readable } from 'node:stream';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import { AppError } from '../errors.ts';
import { parsesBodyOf } from '../middleware/bodyParser.ts';
import { CLIENT_IP_HEADER, dropConnectionsTo, forwardTo, type ForwardTarget } from '../workers/forward.ts';
import { readBounded, type ClusterHooks } from '../workers/ownerRouting.ts';
import { routeTarget } from '../../cluster/routeTarget.ts';
import type { ClusterNode } from '../../cluster/nodes/clusterNode.ts';
import { internalApi } from './internalApi.ts';
import { NODE_HEADER, signedHeaders, verifiedNode } from '../../cluster/nodes/nodeSignature.ts';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Thrown by the gate before any work: the request runs on the project's primary instead. */
export class ForwardToNode extends Error {
  /** The request is counted (usage analytics) where it runs, not here. */
  readonly countedElsewhere = true;
  constructor(
    readonly projectId: string,
    readonly node: string,
  ) {
    super(`project ${projectId} is written by node ${node}`);
  }
}

const addressOf = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)), secure: u.protocol === 'https:' };
};

const electing = (project: string) => new DomainError('SERVICE_UNAVAILABLE', 'The project’s primary is being replaced after a failure; retry in a moment.', { reason: 'ELECTING', project }, { 'retry-after': '1' });

/**
 * Routing between the nodes of a cluster (docs/design/cluster.md §4): every request about a
 * project runs on its primary, reads included, so a client reads its own writes through any node.
 * A request whose address names the project is forwarded before anything is read; any other
 * keeps its JSON body until the route's declared check has found the project (the gate), then is
 * forwarded whole. Forwarded requests carry this node's signature: the target trusts the client
 * address it names, authenticates the caller again, and never forwards them a second time.
 * The node-to-node endpoints (/internal/) come first.
 */
export function nodeRouting(node: ClusterNode, o: { bodyLimitBytes: number }): ClusterHooks {
  const internal = internalApi(node);

  const targetOf = (primary: string): ForwardTarget => {
    const url = node.urlOf(primary);
    if (!url) throw new DomainError('SERVICE_UNAVAILABLE', 'The node that writes this project is not known here yet; retry in a moment.', { reason: 'UNKNOWN_NODE', node: primary }, { 'retry-after': '1' });
    // A node that does not take a connection within the down-after time is as good as down.
    return { ...addressOf(url), headers: {}, connectTimeoutMs: node.downAfterMs };
  };
  // Requests forwarded to a node marked down end with 503 at once rather than when its TCP gives up.
  node.onNodeDown((n) => dropConnectionsTo(addressOf(n.url)));
  const forward = (ctx: Context, primary: string, body: Buffer | Readable) => {
    const target = targetOf(primary);
    // The signature covers the address and the client address the target is asked to trust.
    target.headers = signedHeaders(node.key, node.me, ctx.method, `${ctx.originalUrl}\n${ctx.ip}`);
    return forwardTo(ctx, target, body);
  };

  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path.startsWith('/internal/v1/')) return internal(ctx, next);
    // A replica's fetch from this primary (remote/nodeFetch.ts, which checks the signature).
    if (ctx.path.startsWith('/internal/git/')) return next();
    if (ctx.req.headers[NODE_HEADER] !== undefined) {
      const ip = ctx.req.headers[CLIENT_IP_HEADER];
      if (!verifiedNode(node.key, ctx.req.headers, ctx.method, `${ctx.originalUrl}\n${typeof ip === 'string' ? ip : ''}`)) throw new AppError('FORBIDDEN', 'A forwarded request needs a node’s signature.');
      if (typeof ip === 'string' && ip !== '') ctx.request.ip = ip;
      ctx.state.forwarded = true;
      return next();
    }
    const target = routeTarget(ctx.method, ctx.path, ctx.querystring);
    if (target.project) {
      const p = await node.placementOf(target.project);
      if (!p || p.primary === node.me) return next();
      if (p.primary === null) throw electing(target.project);
      return forward(ctx, p.primary, ctx.req);
    }
    const declared = Number(ctx.req.headers['content-length'] ?? NaN);
    if (target.change && parsesBodyOf(ctx.method, ctx.path) && JSON_TYPE.test(String(ctx.req.headers['content-type'] ?? '')) && !(declared > o.bodyLimitBytes)) {
      ctx.state.replayBody = await readBounded(ctx.req, o.bodyLimitBytes);
    }
    try {
      await next();
    } catch (err) {
      if (!(err instanceof ForwardToNode)) throw err;
      const body: Buffer | Readable = (ctx.state.replayBody as Buffer | undefined) ?? ctx.req;
      await forward(ctx, err.node, body);
    }
  };

  const gate = async (ctx: Context, projectId: string) => {
    const p = await node.placementOf(projectId);
    if (!p || p.primary === node.me || ctx.state.forwarded) return;
    if (p.primary === null) throw electing(projectId);
    if (ctx.state.replayBody || !ctx.req.readableDidRead) throw new ForwardToNode(projectId, p.primary);
    // A body already streamed here (a multipart upload naming its project inside) cannot be sent on,
    // and its files would wait on the wrong node's disk: the client names the project in the address.
    throw invalidField('project_id', 'On a cluster, an upload must name its project in the address (?project_id=…), so that it reaches the node that writes the project.');
  };

  return { middleware, gate, gateReads: true };
}
