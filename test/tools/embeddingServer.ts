import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking the OpenAI `/v1/embeddings` wire format. Vectors are bags of hashed
 * words (texts sharing words are close), so ranking by meaning is testable without a model. It
 * records every request, and can be told to fail (429/500) for a while and then recover.
 */
export class EmbeddingServer {
  readonly requests: { inputs: string[]; model: string; authorization: string | undefined }[] = [];
  failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  /** While true every request fails (a provider that is down) until set back. */
  down = false;
  private server: Server | null = null;
  url = '';

  constructor(readonly dims = 32) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url !== '/v1/embeddings' || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        if (this.down || this.failures.remaining > 0) {
          if (!this.down) this.failures.remaining--;
          res.writeHead(this.down ? 503 : this.failures.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'try later' } }));
          return;
        }
        const parsed = JSON.parse(body) as { input: string[] | string; model: string };
        const inputs = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
        this.requests.push({ inputs, model: parsed.model, authorization: req.headers.authorization });
        const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: embed(text, this.dims) }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: 0, total_tokens: 0 } }));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** Every text the server embedded, in order. */
  embedded(): string[] {
    return this.requests.flatMap((r) => r.inputs);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

export function embed(text: string, dims: number): number[] {
  const v: number[] = Array.from({ length: dims }, () => 0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash('md5').update(w).digest();
    v[h[0]! % dims]! += 1;
    v[h[1]! % dims]! += 0.5;
  }
  if (!v.some((x) => x !== 0)) v[0] = 1;
  return v;
}
