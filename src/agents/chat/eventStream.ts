import type { IncomingMessage, ServerResponse } from 'node:http';

/** A comment line this often keeps proxies from closing a stream while the model or a tool is slow. */
const HEARTBEAT_MS = 15_000;

/**
 * The answer of `POST /agents` as Server-Sent Events: one `data: <json>` line per event. The
 * signal aborts when the client goes away before the end, which cancels the turn upstream.
 */
export class EventStream {
  private readonly controller = new AbortController();
  private readonly heartbeat: NodeJS.Timeout;
  private ended = false;

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'close',
      'x-accel-buffering': 'no',
    });
    // `close` on the response before `end` means the client left (or the socket broke).
    res.on('close', () => {
      if (!this.ended) this.controller.abort();
      clearInterval(this.heartbeat);
    });
    this.heartbeat = setInterval(() => this.res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  send(event: { type: string }): void {
    if (this.ended || this.res.destroyed) return;
    this.res.write(`data: ${JSON.stringify(event)}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.res.end();
  }
}
