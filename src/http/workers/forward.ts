import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Context } from 'koa';

/** Headers a forward adds: the box's secret (so the owner trusts the next one) and the client's address. */
export const FORWARD_SECRET_HEADER = 'x-cns-forward';
export const CLIENT_IP_HEADER = 'x-cns-client-ip';
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** Where a request is sent on: another worker's loopback listener, or another node (src/cluster/nodes/), with the headers that make the target trust it. */
export interface ForwardTarget {
  host: string;
  port: number;
  headers: Record<string, string>;
  /** Over TLS (a node whose CNS_NODE_URL is https). */
  secure?: boolean;
  /** A new connection not made within this time fails the request with 503 (a node cut off the network: its SYNs go unanswered for minutes). */
  connectTimeoutMs?: number;
}

/** A worker of this box: its private loopback listener, vouched for by the box's secret. */
export const workerTarget = (port: number, secret: string): ForwardTarget => ({ host: '127.0.0.1', port, headers: { [FORWARD_SECRET_HEADER]: secret } });

const agents = new Map<string, Agent>();
const keyOf = (t: Pick<ForwardTarget, 'host' | 'port' | 'secure'>) => `${t.secure ? 'https' : 'http'}://${t.host}:${t.port}`;
const agentFor = (t: ForwardTarget) => {
  const key = keyOf(t);
  let a = agents.get(key);
  if (!a) agents.set(key, (a = t.secure ? new HttpsAgent({ keepAlive: true, maxSockets: 64 }) : new Agent({ keepAlive: true, maxSockets: 64 })));
  return a;
};

/**
 * Ends every request forwarded to the target and every connection kept to it: a node marked down
 * (cut off, frozen) would otherwise hold them open until its TCP gave up. Requests not yet answered
 * get 503 (retry: the next one goes to the project's new primary); streams already answering end.
 */
export function dropConnectionsTo(t: Pick<ForwardTarget, 'host' | 'port' | 'secure'>): void {
  const key = keyOf(t);
  agents.get(key)?.destroy();
  agents.delete(key);
}

/**
 * Runs the request on another worker or node (the project's owner) and streams the answer back:
 * the body is either the bytes already read (a JSON body kept for this) or the request itself,
 * unread. The caller's credentials travel as they came; the target's headers tell it the client
 * address is ours to vouch for.
 */
export async function forwardTo(ctx: Context, target: ForwardTarget, body: Buffer | Readable): Promise<void> {
  ctx.respond = false;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(ctx.req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  Object.assign(headers, target.headers);
  headers[CLIENT_IP_HEADER] = ctx.ip;
  if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length);
  else if (ctx.req.headers['transfer-encoding']) delete headers['content-length'];
  const out = ctx.res;
  await new Promise<void>((resolve) => {
    const up = (target.secure ? httpsRequest : request)({ host: target.host, port: target.port, method: ctx.method, path: ctx.originalUrl, headers, agent: agentFor(target) });
    const fail = (status: number, code: string, message: string) => {
      if (!out.headersSent) {
        out.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
        out.end(JSON.stringify({ success: false, code, message, data: null }));
      } else out.destroy();
      resolve();
    };
    up.on('response', (res) => {
      const h: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) h[k] = v;
      out.writeHead(res.statusCode ?? 502, res.statusMessage, h);
      // Event streams flush each event as it comes: nothing is buffered on the way.
      out.flushHeaders();
      res.pipe(out);
      finished(out).then(resolve, () => {
        res.destroy();
        resolve();
      });
    });
    if (target.connectTimeoutMs) {
      const limit = target.connectTimeoutMs;
      up.on('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(() => up.destroy(new Error('connect timeout')), limit);
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
    }
    up.on('error', () => fail(503, 'SERVICE_UNAVAILABLE', 'The worker or node that writes this project did not answer; retry the request.'));
    // A client that goes away cancels the request on the owner too.
    out.on('close', () => {
      if (!out.writableFinished) up.destroy();
    });
    if (Buffer.isBuffer(body)) up.end(body);
    else body.pipe(up);
  });
}
