import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Page {
  status?: number;
  type?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

/** A local web site for URL ingestion: pages by path, a log of requests, and pages held until released. */
export interface Site {
  url: string;
  /** Paths requested, in order (with their query strings). */
  requests: string[];
  page(path: string, page: Page | ((req: IncomingMessage, res: ServerResponse) => void)): void;
  /** The page at `path` answers only once `release()` is called; `requested` settles when a request for it arrived. */
  hold(path: string, page: Page): { requested: Promise<void>; release(): void };
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const pages = new Map<string, Page | ((req: IncomingMessage, res: ServerResponse) => void)>();
  const requests: string[] = [];
  const send = (res: ServerResponse, p: Page) => {
    res.writeHead(p.status ?? 200, { 'content-type': p.type ?? 'text/html; charset=utf-8', ...p.headers });
    res.end(p.body ?? '');
  };
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const p = pages.get((req.url ?? '/').split('?')[0]!) ?? pages.get(req.url ?? '/');
    if (!p) return send(res, { status: 404, type: 'text/plain', body: 'not found' });
    if (typeof p === 'function') return p(req, res);
    send(res, p);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    page: (path, page) => void pages.set(path, page),
    hold(path, page) {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let arrived!: () => void;
      const requested = new Promise<void>((r) => (arrived = r));
      pages.set(path, (_req, res) => {
        arrived();
        void released.then(() => send(res, page));
      });
      return { requested, release };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
