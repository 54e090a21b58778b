import type { Logger } from '../logging/logger.ts';

export interface EmbeddingsConfig {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  dimensions: number | undefined;
}

/** A provider failure after retries; `retryable` when it may recover (429, 5xx, network). */
export class EmbeddingsError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}

export interface EmbeddingsOptions {
  /** Inputs per request. */
  batchSize?: number;
  /** Requests in flight at once when there are several batches. */
  parallel?: number;
  /** Attempts per request on 429/5xx/network errors. */
  attempts?: number;
  /** First backoff delay; doubles per attempt (a Retry-After header wins when shorter than 10 s). */
  backoffMs?: number;
  timeoutMs?: number;
  logger?: Logger;
}

/**
 * A client of an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio):
 * inputs go in batches, 429 and 5xx answers are retried with exponential backoff. The base URL
 * is the operator's setting, so it is not subject to the per-request address guard. The API key
 * is sent only in the Authorization header and never logged.
 */
export class EmbeddingsClient {
  readonly batchSize: number;
  readonly parallel: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  constructor(
    readonly config: EmbeddingsConfig,
    private readonly options: EmbeddingsOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 64;
    this.parallel = options.parallel ?? 4;
    this.attempts = options.attempts ?? 3;
    this.backoffMs = options.backoffMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  get model(): string {
    return this.config.model;
  }

  /** Vectors for `inputs`, in order: one request per batch, up to `parallel` of them at once. */
  async embed(inputs: string[]): Promise<Float32Array[]> {
    const batches: string[][] = [];
    for (let i = 0; i < inputs.length; i += this.batchSize) batches.push(inputs.slice(i, i + this.batchSize));
    const out: Float32Array[][] = [];
    for (let i = 0; i < batches.length; i += this.parallel) {
      out.push(...(await Promise.all(batches.slice(i, i + this.parallel).map((b) => this.request(b)))));
    }
    return out.flat();
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const url = `${this.config.baseUrl}/embeddings`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const body = JSON.stringify({ model: this.config.model, input, encoding_format: 'float', ...(this.config.dimensions ? { dimensions: this.config.dimensions } : {}) });
    let last: EmbeddingsError | null = null;
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0) await delay(this.backoff(attempt, last));
      let res: Response;
      try {
        res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (err) {
        last = new EmbeddingsError(`embedding provider unreachable: ${(err as Error).message}`, true);
        continue;
      }
      if (res.ok) return parseVectors(await res.json().catch(() => null), input.length);
      const text = (await res.text().catch(() => '')).slice(0, 200);
      const retryable = res.status === 429 || res.status >= 500;
      last = Object.assign(new EmbeddingsError(`embedding provider answered ${res.status}${text ? `: ${text}` : ''}`, retryable), { retryAfter: res.headers.get('retry-after') });
      if (!retryable) break;
      this.options.logger?.debug({ status: res.status, attempt }, 'embedding request failed; retrying');
    }
    throw last ?? new EmbeddingsError('embedding request failed', true);
  }

  private backoff(attempt: number, last: EmbeddingsError | null): number {
    const retryAfter = Number((last as { retryAfter?: string | null } | null)?.retryAfter);
    const exp = this.backoffMs * 2 ** (attempt - 1);
    return Number.isFinite(retryAfter) && retryAfter >= 0 && retryAfter <= 10 ? Math.min(retryAfter * 1000, exp * 4) : exp;
  }
}

function parseVectors(json: unknown, expected: number): Float32Array[] {
  const data = (json as { data?: { embedding?: unknown; index?: number }[] } | null)?.data;
  if (!Array.isArray(data) || data.length !== expected) throw new EmbeddingsError('embedding provider answered an unexpected body', false);
  const sorted = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  return sorted.map((d) => {
    if (!Array.isArray(d.embedding) || d.embedding.length === 0) throw new EmbeddingsError('embedding provider answered an item without a vector', false);
    return normalize(Float32Array.from(d.embedding as number[]));
  });
}

/** Unit length, so that cosine distance is well defined whatever the provider returns. */
function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return v;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
