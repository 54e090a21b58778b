import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { readCredentials, saveServerCredentials, type ServerCredentials } from '../credentials.ts';
import { ApiError, authError, CliError } from './errors.ts';
import { withFileLock } from './fileLock.ts';
import type { Target } from './target.ts';

export type Query = Record<string, string | number | boolean | undefined>;

interface Envelope<T> {
  success: boolean;
  data: T;
  message: string;
  error?: { code: string; details: unknown };
}

/** A request body: JSON (sent as such), or a form (multipart, its file parts streamed from their Blobs). */
type Body = { json: unknown } | { form: FormData } | undefined;

export interface ApiResult<T> {
  data: T;
  message: string;
}

const codeForStatus: Record<number, string> = { 400: 'VALIDATION_ERROR', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE', 422: 'VALIDATION_ERROR', 429: 'RATE_LIMITED' };

/** Refresh a stored sign-in this long before its access token expires. */
const REFRESH_MARGIN_MS = 30_000;

/**
 * The REST API as the command line uses it: `{server}/api/v1` with the target's bearer token.
 * Success envelopes are unwrapped; error envelopes become ApiError (typed by the API's code).
 * A stored sign-in whose access token has expired is refreshed once and saved back.
 */
export class ApiClient {
  readonly server: string;
  private token: string | null;
  private readonly target: Target;

  constructor(target: Target) {
    this.target = target;
    this.server = target.server;
    this.token = target.token;
  }

  get hasToken(): boolean {
    return this.token !== null;
  }

  get tokenValue(): string | null {
    return this.token;
  }

  url(path: string, query: Query = {}): string {
    const url = new URL(`${this.server}/api/v1${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  get<T>(path: string, query?: Query): Promise<ApiResult<T>> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, body: unknown = {}): Promise<ApiResult<T>> {
    return this.request<T>('POST', path, { body });
  }

  delete<T>(path: string): Promise<ApiResult<T>> {
    return this.request<T>('DELETE', path, {});
  }

  /** A JSON route: the envelope's data and message, or an ApiError. */
  async request<T>(method: string, path: string, options: { query?: Query; body?: unknown; anonymous?: boolean }): Promise<ApiResult<T>> {
    const res = await this.send(method, this.url(path, options.query), options.body === undefined ? undefined : { json: options.body }, options.anonymous ?? false);
    return this.envelopeOf<T>(res);
  }

  /**
   * A multipart route (`/import`): `form`'s parts as multipart/form-data, a file part streamed from
   * its Blob (`fs.openAsBlob`: read from disk as it is sent, never held whole); the envelope's data.
   */
  async postForm<T>(path: string, form: FormData): Promise<ApiResult<T>> {
    return this.envelopeOf<T>(await this.send('POST', this.url(path), { form }, false));
  }

  /** A byte route (`/raw`): the body as bytes, or the error envelope as an ApiError. */
  async bytes(path: string, query: Query): Promise<Buffer> {
    const res = await this.send('GET', this.url(path, query), undefined, false);
    if (!res.ok) throw await this.errorOf(res);
    return Buffer.from(await res.arrayBuffer());
  }

  /**
   * A streamed byte route (`/archive`): the body piped into `sink` as it arrives (never held
   * whole; `end: false` leaves the sink open, as for stdout), then the answer's headers; an
   * error answer is an ApiError and `sink` gets nothing.
   */
  async download(path: string, query: Query, sink: Writable, options: { end?: boolean } = {}): Promise<Headers> {
    const res = await this.send('GET', this.url(path, query), undefined, false);
    if (!res.ok) throw await this.errorOf(res);
    const body = res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]);
    await pipeline(body, sink, { end: options.end ?? true });
    return res.headers;
  }

  private async envelopeOf<T>(res: Response): Promise<ApiResult<T>> {
    const text = await res.text();
    let envelope: Envelope<T> | null = null;
    try {
      envelope = JSON.parse(text) as Envelope<T>;
    } catch {
      envelope = null;
    }
    if (!envelope || typeof envelope !== 'object' || typeof envelope.success !== 'boolean') {
      const code = codeForStatus[res.status] ?? 'BAD_RESPONSE';
      throw new ApiError(res.status, code, `${this.server} answered ${res.status} ${res.statusText} without a cns answer; is it a cns server?`, null);
    }
    if (!envelope.success) throw new ApiError(res.status, envelope.error?.code ?? codeForStatus[res.status] ?? 'ERROR', envelope.message, envelope.error?.details ?? null);
    return { data: envelope.data, message: envelope.message };
  }

  /** A failed byte answer: its error envelope as an ApiError (or the bare status). */
  private async errorOf(res: Response): Promise<ApiError> {
    const body = await res.text().catch(() => '');
    let parsed: Envelope<unknown> | null = null;
    try {
      parsed = JSON.parse(body) as Envelope<unknown>;
    } catch {
      parsed = null;
    }
    return new ApiError(res.status, parsed?.error?.code ?? codeForStatus[res.status] ?? 'ERROR', parsed?.message ?? `${res.status} ${res.statusText}`, parsed?.error?.details ?? null);
  }

  /** Fails with how to sign in when there is no token for the server. */
  requireToken(): void {
    if (!this.token) throw authError(`not signed in to ${this.server}: run \`cns login --server ${this.server}\`, or set CNS_TOKEN`);
  }

  private async send(method: string, url: string, body: Body, anonymous: boolean): Promise<Response> {
    if (!anonymous) {
      this.requireToken();
      if (this.expiresSoon()) await this.refresh();
    }
    let res = await this.fetch(method, url, body, anonymous);
    if (res.status === 401 && !anonymous && this.canRefresh()) {
      await this.refresh();
      res = await this.fetch(method, url, body, anonymous);
    }
    return res;
  }

  private async fetch(method: string, url: string, body: Body, anonymous: boolean): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'cns-cli' };
    if (!anonymous && this.token) headers.authorization = `Bearer ${this.token}`;
    let payload: string | FormData | undefined;
    if (body && 'json' in body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body) payload = body.form; // fetch writes the multipart boundary into content-type
    try {
      return await fetch(url, { method, headers, body: payload });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach ${this.server}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  /** The token to use now: a stored sign-in near its expiry is refreshed first, as before any request. */
  async currentToken(): Promise<string | null> {
    if (this.expiresSoon()) await this.refresh();
    return this.token;
  }

  private canRefresh(): boolean {
    return this.target.source === 'file' && Boolean(this.target.stored?.refresh_token && this.target.credentialsFile);
  }

  private expiresSoon(): boolean {
    const at = this.target.stored?.expires_at;
    return this.canRefresh() && at !== undefined && Date.parse(at) - REFRESH_MARGIN_MS < Date.now();
  }

  /**
   * Trades the stored refresh token for a new pair and saves it. Refresh tokens are single use,
   * so this happens under a lock, and a pair another process saved meanwhile is taken as is.
   */
  private async refresh(): Promise<void> {
    const file = this.target.credentialsFile!;
    await withFileLock(`${file}.lock`, async () => {
      const latest = readCredentials(file).servers[this.server];
      if (latest?.token && latest.token !== this.token && !(latest.expires_at && Date.parse(latest.expires_at) - REFRESH_MARGIN_MS < Date.now())) {
        this.adopt(latest);
        return;
      }
      const stored = latest ?? this.target.stored!;
      const res = await this.fetch('POST', this.url('/auth/refresh'), { json: { refresh_token: stored.refresh_token } }, true);
      const envelope = (await res.json().catch(() => null)) as Envelope<{ access_token: string; refresh_token: string; expires_in: number }> | null;
      if (!res.ok || !envelope?.success) {
        throw authError(`the sign-in to ${this.server} has expired (${envelope?.message ?? res.status}); run \`cns login --server ${this.server}\``);
      }
      const next = {
        ...stored,
        token: envelope.data.access_token,
        refresh_token: envelope.data.refresh_token,
        expires_at: new Date(Date.now() + envelope.data.expires_in * 1000).toISOString(),
      };
      saveServerCredentials(this.server, next, file);
      this.adopt(next);
    });
  }

  private adopt(credentials: ServerCredentials): void {
    this.target.stored = credentials;
    this.token = credentials.token;
  }
}
