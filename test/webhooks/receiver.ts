import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  raw: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  at: number;
}

/**
 * A webhook receiver on an ephemeral port of this machine: records every request with its raw
 * body, and answers what `respond` says (a status, or `hang` to never answer).
 */
export class Receiver {
  readonly received: Received[] = [];
  respond: (r: Received, n: number) => number | 'hang' = () => 200;
  private server: Server | null = null;
  private waiters: (() => void)[] = [];
  port = 0;

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const r: Received = { headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')), at: Date.now() };
        this.received.push(r);
        const answer = this.respond(r, this.received.length);
        for (const w of this.waiters.splice(0)) w();
        if (answer === 'hang') return;
        res.writeHead(answer, { 'content-type': 'text/plain' }).end(`answered ${answer}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Resolves once `until()` holds, re-checked at each request; rejects after `ms`. */
  async waitFor(until: () => boolean, ms = 15_000, what = 'deliveries'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!until()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: got ${this.received.length} (${this.received.map((r) => r.headers['x-cns-event']).join(', ')})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Requests of one event name. */
  of(event: string): Received[] {
    return this.received.filter((r) => r.headers['x-cns-event'] === event);
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** Polls `check` until it returns a value (not undefined), within `ms`. */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms = 15_000, what = 'a condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
