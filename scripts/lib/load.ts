import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  /**
   * Each client keeps its own keep-alive connection (its own agent) instead of sharing one pool:
   * a client's requests then always travel on the same connection, as a separate client's would.
   */
  connectionPerClient?: boolean;
}

/**
 * Closed-loop load: `concurrency` clients on keep-alive connections, each sending its next
 * request when the previous answer arrived, until `total` requests are done. Latencies in ms.
 * `next` gets the request's number and the client's (0 … concurrency-1).
 */
export async function runLoad(baseUrl: string, concurrency: number, total: number, next: (i: number, client: number) => RequestSpec, options: LoadOptions = {}): Promise<LoadResult> {
  const url = new URL(baseUrl);
  const shared = new Agent({ keepAlive: true, maxSockets: concurrency });
  const agents = options.connectionPerClient ? Array.from({ length: concurrency }, () => new Agent({ keepAlive: true, maxSockets: 1 })) : [];
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  const one = (spec: RequestSpec, agent: Agent) =>
    new Promise<number>((resolve) => {
      const started = process.hrtime.bigint();
      const req = request(
        { host: url.hostname, port: url.port, method: spec.method, path: spec.path, headers: spec.headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(spec.body);
      return started;
    }).then((status) => status);
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      const agent = agents[client] ?? shared;
      while (issued < total) {
        const i = issued++;
        const t0 = process.hrtime.bigint();
        const status = await one(next(i, client), agent);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (status < 200 || status >= 300) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  shared.destroy();
  for (const a of agents) a.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { requests: total, errors, seconds, rps: total / seconds, p50: pct(0.5), p99: pct(0.99) };
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits);
