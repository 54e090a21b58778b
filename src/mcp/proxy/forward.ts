import { once } from 'node:events';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { DomainError } from '../../errors/domainError.ts';
import type { Logger } from '../../logging/logger.ts';
import { redactUrl } from '../../logging/redact.ts';
import { guardedRequest, limitedBody } from '../../net/guardedFetch.ts';
import { isRefusal } from '../../net/outboundGuard.ts';
import type { ProxyServer } from './proxyStore.ts';

export interface ForwardLimits {
  /** How long the MCP server may take to answer a request's status and headers. */
  headersTimeoutMs: number;
  /** How long a response (an event stream included) may stay silent. */
  idleMs: number;
  /** Bytes of one response, an event stream's whole life included. */
  maxResponseBytes: number;
}

export const defaultForwardLimits: ForwardLimits = { headersTimeoutMs: 30_000, idleMs: 300_000, maxResponseBytes: 16 * 1024 * 1024 };

/** The caller's headers that belong to the Streamable HTTP transport; nothing else of theirs (their Authorization above all) goes on. */
const REQUEST_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'accept', 'content-type', 'last-event-id'];
/** The MCP server's headers the caller gets back. */
const RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'cache-control'];

/**
 * Forwards one Streamable HTTP request to a registered MCP server through the outbound guard
 * and streams its answer back (event streams included) under the limits. Before the answer's
 * headers are written, failures are 502 UPSTREAM_ERROR (a refused address, an unreachable or
 * slow server, the server refusing the stored credentials); after, the stream is cut.
 */
export async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  server: ProxyServer,
  o: ForwardLimits & { allowPrivate: boolean; logger: Logger },
): Promise<void> {
  const where = redactUrl(server.url);
  const headers: OutgoingHttpHeaders = {};
  for (const name of REQUEST_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name];
  Object.assign(headers, server.headers);
  // The JSON parser already read a JSON body: it goes on re-serialized; any other body streams on as it came.
  let payload: Buffer | IncomingMessage | undefined;
  if (body !== undefined) {
    payload = Buffer.from(JSON.stringify(body));
    headers['content-length'] = payload.byteLength;
  } else if (req.method === 'POST') payload = req;

  const aborted = new AbortController();
  res.once('close', () => aborted.abort());
  let upstream: IncomingMessage;
  try {
    upstream = await guardedRequest(new URL(server.url), {
      method: req.method,
      headers,
      body: payload,
      allowPrivate: o.allowPrivate,
      signal: aborted.signal,
      headersTimeoutMs: o.headersTimeoutMs,
    });
  } catch (e) {
    if (isRefusal(e)) {
      throw new DomainError('UPSTREAM_ERROR', `The MCP server's address is refused: ${(e as Error).message} (loopback, private and link-local addresses need CNS_URL_FETCH_ALLOW_PRIVATE).`);
    }
    throw new DomainError('UPSTREAM_ERROR', `The MCP server at ${where} could not be reached: ${(e as Error).message}`);
  }
  const status = upstream.statusCode ?? 502;
  if (status === 401 || status === 403) {
    upstream.resume();
    // Passed on as is, the caller's client would take it for its own credential failing here.
    throw new DomainError('UPSTREAM_ERROR', `The MCP server at ${where} refused the request (${status}): check the headers stored for it.`);
  }

  const back: OutgoingHttpHeaders = {};
  for (const name of RESPONSE_HEADERS) if (upstream.headers[name] !== undefined) back[name] = upstream.headers[name];
  res.writeHead(status, back);
  res.flushHeaders();
  try {
    for await (const chunk of limitedBody(upstream, { maxBytes: o.maxResponseBytes, idleMs: o.idleMs, what: `The answer of ${where}` })) {
      if (!res.write(chunk)) await once(res, 'drain', { signal: aborted.signal });
    }
    res.end();
  } catch (e) {
    if (!aborted.signal.aborted) o.logger.warn({ err: e, server: server.id }, 'an MCP proxy response was cut');
    upstream.destroy();
    res.destroy();
  }
}
