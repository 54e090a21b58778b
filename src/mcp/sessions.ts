import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Principal } from '../auth/principal.ts';
import type { Logger } from '../logging/logger.ts';
import type { SessionTransport } from './transport.ts';

export interface SessionLimits {
  /** Open sessions at most; a new one evicts the least recently used (idle ones first). */
  maxSessions: number;
  /** A session unused this long (and with no request or stream open) is closed. */
  idleMs: number;
}

export const defaultSessionLimits: SessionLimits = { maxSessions: 1000, idleMs: 15 * 60_000 };

/** Access to a server ended (a connection deleted, paused or revoked: 'all'; its key regenerated: 'key'). */
export type AccessEnded = { serverId: string; holders: 'all' | 'key' };

/** What the sessions need of a request's context: whose server it is for (a connection's id) and who calls. */
export type SessionKeyOf<C> = (c: C) => { serverId: string; principal: Principal };

interface Session {
  id: string;
  server: Server;
  transport: SessionTransport;
  /** The connection whose server this is (an MCP endpoint or an agent). */
  serverId: string;
  /** Who opened it: only the same credential may use it. */
  holder: string;
  lastUsed: number;
  /** POST requests being answered. */
  posts: number;
  /** The session's open GET event streams (cut at shutdown: nothing else would end them). */
  streams: Set<ServerResponse>;
  /** Ended: closed as soon as no POST is being answered (closing earlier would leave its answer hanging). */
  ending: boolean;
  closed: boolean;
}

/**
 * The transport (the SDK's HTTP transport and message schemas) is imported by the first
 * initialize: a process that never serves MCP never loads it (~0.2 s of CPU with the servers).
 */
let transportModule: Promise<typeof import('./transport.ts')> | undefined;
const loadTransport = () => (transportModule ??= import('./transport.ts'));

const busy = (s: Session) => s.posts > 0 || s.streams.size > 0;

const holderOf = (p: Principal) => `${p.kind}:${p.id}`;

/**
 * The Streamable HTTP sessions of every MCP server of the process (endpoints' and agents'), in
 * memory: one MCP server and transport per session, created by an `initialize` request, used by
 * later requests that carry its `Mcp-Session-Id` (and the same credential on the same server),
 * ended by DELETE, by the idle sweep, by eviction when the store is full, or when access to the
 * server ends. Nothing else refers to a closed session, so its memory goes with it. `C` is the
 * context the HTTP gate resolved for a request.
 */
export class McpSessions<C> {
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private limits!: SessionLimits;

  constructor(
    private readonly build: (first: C) => Server | Promise<Server>,
    private readonly keyOf: SessionKeyOf<C>,
    private readonly logger: Logger,
    limits: SessionLimits = defaultSessionLimits,
  ) {
    this.setLimits(limits);
  }

  /** The bounds in force; the sweep runs at a quarter of the idle time (between 1 s and 1 min). */
  setLimits(limits: SessionLimits): void {
    this.limits = { ...limits };
    clearInterval(this.sweeper);
    if (this.closed) return;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1_000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  /** POST requests being answered, all sessions together. */
  get inFlight(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.posts;
    return n;
  }

  /** Calls whose answer the server has not given yet, all sessions together (a call outlives a client that went away). */
  get unanswered(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.transport.unanswered;
    return n;
  }

  /** Open GET event streams, all sessions together. */
  get streams(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.streams.size;
    return n;
  }

  /**
   * Answers one HTTP request of an MCP client with the context the gate resolved. The transport
   * writes the response itself (JSON or SSE); `body` is the JSON already parsed by the app.
   */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown, c: C): Promise<void> {
    const { serverId, principal } = this.keyOf(c);
    // The transport hands this to every request handler as `extra.authInfo`.
    (req as IncomingMessage & { auth?: unknown }).auth = { token: '', clientId: principal.id, scopes: [], extra: { mcp: c } };
    const id = req.headers['mcp-session-id'];
    if (id === undefined) {
      if (req.method === 'POST' && (await loadTransport()).isInitialization(body)) return this.open(req, res, body, c);
      return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (send initialize first).');
    }
    const session = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (!session || session.serverId !== serverId || session.holder !== holderOf(principal)) {
      return rpcError(res, 404, -32001, 'Session not found (it ended or expired): initialize a new one.');
    }
    this.sessions.delete(session.id); // re-inserted last: the map's order is least recently used first
    this.sessions.set(session.id, session);
    await this.run(session, req, res, body);
  }

  /** Ends the sessions an event takes access from (all of the server's, or those opened with its key). */
  endAccess(event: AccessEnded): void {
    for (const s of [...this.sessions.values()]) {
      if (s.serverId === event.serverId && (event.holders === 'all' || s.holder.startsWith('key:'))) this.end(s);
    }
  }

  /**
   * Ends every session (shutdown). Event streams are cut with their connections, so that the
   * HTTP server does not wait for them (nor for their keep-alive) before it stops; requests in
   * flight finish.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    for (const s of [...this.sessions.values()]) {
      for (const res of s.streams) res.socket?.destroy();
      this.end(s);
    }
  }

  private async open(req: IncomingMessage, res: ServerResponse, body: unknown, c: C): Promise<void> {
    const { SessionTransport } = await loadTransport(); // loaded already: handle() checked the initialize with it
    // Also when the sessions closed while the server was built (its instructions read the store).
    const server = this.closed ? null : await this.build(c);
    if (!server || this.closed) {
      await server?.close();
      return rpcError(res, 503, -32000, 'The server is shutting down.');
    }
    while (this.sessions.size >= this.limits.maxSessions) this.evict();
    const { serverId, principal } = this.keyOf(c);
    const session: Session = {
      id: '',
      server,
      transport: null!,
      serverId,
      holder: holderOf(principal),
      lastUsed: Date.now(),
      posts: 0,
      streams: new Set(),
      ending: false,
      closed: false,
    };
    session.transport = new SessionTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: prefersJson(req.headers.accept),
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
      },
    });
    // However the transport ends (DELETE, sweep, eviction, access ended), the session is forgotten.
    session.transport.onclose = () => {
      if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    };
    session.transport.onerror = (err) => this.logger.debug({ err }, 'MCP transport error');
    await server.connect(session.transport);
    await this.run(session, req, res, body);
    // An initialize the transport refused (a malformed request) leaves nothing behind.
    if (!session.id) await server.close();
  }

  private async run(session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const stream = req.method === 'GET';
    if (stream) session.streams.add(res);
    else session.posts++;
    session.lastUsed = Date.now();
    const closed = () => {
      if (stream) session.streams.delete(res);
      else session.posts--;
      session.lastUsed = Date.now();
      if (session.ending && session.posts === 0) this.closeServer(session);
    };
    // A client that went away while the request was authorized (an await on the metadata store,
    // longer on PostgreSQL) has closed its response already: 'close' will not come again.
    if (res.closed) queueMicrotask(closed);
    else res.once('close', closed);
    await session.transport.handleRequest(req, res, body);
  }

  /** Room for one more: the least recently used idle session goes, or the least recently used of all. */
  private evict(): void {
    let victim: Session | undefined;
    for (const s of this.sessions.values()) {
      victim ??= s;
      if (!busy(s)) {
        victim = s;
        break;
      }
    }
    if (victim) this.end(victim);
  }

  private sweep(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const s of [...this.sessions.values()]) if (!busy(s) && s.lastUsed < before) this.end(s);
  }

  /** No request reaches the session any more; its server closes (ending its event stream) once its answers are out. */
  private end(s: Session): void {
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    if (s.ending) return;
    s.ending = true;
    if (s.posts === 0) this.closeServer(s);
  }

  private closeServer(s: Session): void {
    if (s.closed) return;
    s.closed = true;
    s.server.close().catch((err: unknown) => this.logger.warn({ err }, 'closing an MCP session failed'));
  }
}

/**
 * Responses come as JSON unless the client ranks `text/event-stream` above `application/json`
 * in its Accept header (both must be there; the transport answers 406 otherwise). Chosen once
 * per session, at initialization; the GET stream is SSE either way.
 */
export function prefersJson(accept: string | undefined): boolean {
  const ranks = (accept ?? '').split(',').map((part, index) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
    return { type: type!.trim(), q: q ? Number(q[1]) : 1, index };
  });
  const json = ranks.find((r) => r.type === 'application/json');
  const sse = ranks.find((r) => r.type === 'text/event-stream');
  if (!json || !sse) return true;
  return sse.q < json.q || (sse.q === json.q && json.index < sse.index);
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
