import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInitializeRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

type McpRequest = IncomingMessage & { auth?: AuthInfo };

interface Waiting {
  res: ServerResponse;
  done: () => void;
}

// Of a JSON-RPC message already known valid, the shape alone tells the kind (the SDK's predicates parse it again with zod).
const isAnswer = (m: JSONRPCMessage) => 'result' in m || 'error' in m;
const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;

/**
 * The SDK's Streamable HTTP server transport with one shortcut. Beyond the tool itself, most of a
 * call's cost on a JSON session was the SDK turning each Node request and response into web
 * `Request`/`Response` objects (through @hono/node-server) and reading the answer back out of a
 * web stream: 0.1-0.15 ms of server CPU per call, a fifth or more of it (measured). The
 * shortcut takes only what the SDK would answer that way without refusing it: a POST of one
 * JSON-RPC request (not an initialize) on an initialized, open JSON session, carrying the
 * session's id, an accepted protocol version and the Accept and Content-Type the SDK requires,
 * the message checked with the SDK's own schema. It hands the message to the server as the SDK
 * does and writes the answer as the SDK would (200, `application/json`, the session id).
 * Everything else (initialize, GET streams, DELETE, notifications, batches, SSE answers and every
 * refusal) goes to the SDK's transport, which owns the session's state.
 */
export class SessionTransport implements Transport {
  private readonly sdk: StreamableHTTPServerTransport;
  private readonly json: boolean;
  /** Requests taken by the shortcut, by JSON-RPC id, until their answer is written. */
  private readonly waiting = new Map<RequestId, Waiting>();
  private closed = false;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(options: StreamableHTTPServerTransportOptions) {
    this.json = options.enableJsonResponse ?? false;
    this.sdk = new StreamableHTTPServerTransport(options);
    this.sdk.onmessage = (message, extra) => this.onmessage?.(message, extra);
    this.sdk.onerror = (error) => this.onerror?.(error);
    this.sdk.onclose = () => {
      this.closed = true;
      // The server drops the answers of calls still running (it aborts them): say so rather than leave the client waiting.
      for (const [id, w] of this.waiting) {
        this.answer(w, { jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: 'Connection closed: the session ended before this call was answered.' } });
      }
      this.waiting.clear();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  /** Calls taken by the shortcut whose answer the server has not given yet (their client may be gone). */
  get unanswered(): number {
    return this.waiting.size;
  }

  start(): Promise<void> {
    return this.sdk.start();
  }

  close(): Promise<void> {
    return this.sdk.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answer = isAnswer(message);
    const id = answer ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const waiting = id === undefined ? undefined : this.waiting.get(id);
    if (!waiting) return this.sdk.send(message, options);
    // What a request sends before its answer (progress, a request to the client) has no stream
    // to go on in a JSON answer: the SDK drops it too.
    if (!answer) return;
    this.waiting.delete(id!);
    this.answer(waiting, message);
  }

  private answer({ res, done }: Waiting, message: JSONRPCMessage): void {
    if (!res.destroyed) {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': this.sessionId! });
      res.end(JSON.stringify(message));
    }
    done();
  }

  /** Answers one HTTP request of the session; `body` is the JSON already parsed by the app. */
  handleRequest(req: McpRequest, res: ServerResponse, body: unknown): Promise<void> {
    const message = this.shortcut(req, body);
    if (!message) return this.sdk.handleRequest(req, res, body);
    // The URL is built only if a handler asks for it (none of ours does).
    const requestInfo = { headers: req.headers, get url() { return requestUrl(req); } };
    return new Promise<void>((resolve) => {
      const done = () => resolve();
      this.waiting.set(message.id, { res, done });
      // A client that goes away is answered by nobody; its entry goes when the server answers.
      res.once('close', done);
      this.onmessage?.(message, { authInfo: req.auth, requestInfo });
    });
  }

  /** The request, when the SDK would answer it in JSON without refusing it; otherwise undefined. */
  private shortcut(req: McpRequest, body: unknown): JSONRPCRequest | undefined {
    if (!this.json || this.closed || req.method !== 'POST' || this.sessionId === undefined) return undefined;
    const h = req.headers;
    if (h['mcp-session-id'] !== this.sessionId) return undefined;
    const version = h['mcp-protocol-version'];
    if (version !== undefined && !(typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
    const accept = h.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    if (!isJsonContentType(h['content-type'] ?? null)) return undefined;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const parsed = JSONRPCMessageSchema.safeParse(body);
    // Anything named initialize goes to the SDK, which checks it in full.
    if (!parsed.success || !isRequest(parsed.data) || parsed.data.method === 'initialize') return undefined;
    // Ids are unique within a session (the spec); a client that reuses one still in flight is left to the SDK.
    if (this.waiting.has(parsed.data.id)) return undefined;
    return parsed.data;
  }
}

function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    return undefined;
  }
}

/** Whether a POST without a session id starts one (one message or a batch). */
export const isInitialization = (body: unknown) => (Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body));
