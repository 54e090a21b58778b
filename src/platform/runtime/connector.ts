import type { ConnectorSpec } from '../../sync/connectorSpec.ts';
import type { SourceCredential } from './credentials.ts';
import type { ConvertInput, ConvertOutput } from '../../ingest/converters/converter.ts';

/**
 * The one interface every platform connector implements (issue 16). A connector knows its
 * platform's API and nothing else: the runtime owns scheduling, runs, retries, rate limits,
 * cursors, credentials, and turning source changes into content-store commits.
 */
export interface PlatformConnector {
  /** The record `GET /sync/connectors` lists (with `auth.scopes` and `capabilities`). */
  spec: ConnectorSpec;
  /** The headers that carry a credential (GitHub `Bearer`, Linear's bare personal key, Notion-Version…). */
  authHeaders(credential: SourceCredential): Record<string, string>;
  /**
   * Milliseconds to wait when an answer is the provider's own rate-limit signal beyond 429 +
   * `Retry-After` (GitHub: 403 with `x-ratelimit-remaining: 0` and `x-ratelimit-reset`); null otherwise.
   */
  rateLimitDelay?(res: SourceResponse, now: number): number | null;
  /**
   * Whether an answer other than a 401 says the credential was refused (Linear: a 400 with
   * `AUTHENTICATION_ERROR`); such an answer is handled like a 401.
   */
  isUnauthorized?(res: SourceResponse): boolean;
  /** Checks a sync's config beyond the declared fields; throws `invalidField(...)` on bad input. */
  validateConfig?(config: SyncConfig): void;
  /** Source changes since `cursor` (null: a first, full pull), page by page, each with its cursor. */
  pull(ctx: ConnectorContext, cursor: string | null): AsyncIterable<PullPage>;
  /** Sends changes made here back to the source (only when `spec.capabilities.push` allows them). */
  push?(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]>;
}

/** A sync's config as stored (the declared `config_fields`; `path` is the project folder it fills). */
export type SyncConfig = Record<string, unknown>;

/** One item of the source, as a node. */
export interface SourceItem {
  /** Stable id at the source: the same item keeps its node (a changed `path` is a move here). */
  sourceId: string;
  /** Path under the sync's folder, '/'-separated, no leading slash, with the extension of `type`. */
  path: string;
  type: 'json' | 'markdown' | 'file';
  /** A JSON value (json), a string (markdown), or bytes (file). */
  content: unknown;
  /** The source's version of the item (updated_at, sha, etag): an unchanged one is not rewritten. */
  sourceVersion: string;
  /** Small connector-owned facts kept with the item for later runs (a blob sha, a parent id). */
  meta?: Record<string, unknown>;
}

export type SourceChange = { kind: 'upsert'; item: SourceItem } | { kind: 'delete'; sourceId: string };

export interface PullPage {
  changes: SourceChange[];
  /** The cursor after this page; the runtime stores it once the page is committed. */
  cursor: string | null;
}

/** What the runtime remembers of an item from earlier runs. */
export interface KnownItem {
  sourceId: string;
  path: string;
  sourceVersion: string;
  meta: Record<string, unknown>;
}

export interface KnownItems {
  get(sourceId: string): KnownItem | undefined;
  /** Every item the sync holds (for connectors that detect deletions by listing). */
  all(): Iterable<KnownItem>;
  readonly size: number;
}

/** A node changed here since the last run, offered to `push`. */
export type LocalChange =
  | { kind: 'update'; sourceId: string; known: KnownItem; path: string; type: 'json' | 'markdown' | 'file'; content: unknown; previous: unknown }
  | { kind: 'create'; path: string; type: 'json' | 'markdown' | 'file'; content: unknown }
  | { kind: 'delete'; sourceId: string; known: KnownItem };

/** Per change, in order: the item as the source now has it (its new version), or why it was refused. */
export type PushOutcome =
  | { ok: true; sourceId: string; sourceVersion: string; path?: string; meta?: Record<string, unknown> }
  | { ok: false; message: string };

export interface ConnectorContext {
  syncId: string;
  projectId: string;
  config: SyncConfig;
  known: KnownItems;
  http: SourceHttp;
  /** The provider's API base (its public default, or the `CNS_<PROVIDER>_API_URL` setting). */
  apiBase: string;
  /**
   * Converts a document (PDF, DOCX, XLSX…) with the service's ingestion converters, in their own
   * processes so that a large file does not hold the event loop.
   */
  convert(input: ConvertInput): Promise<ConvertOutput>;
  /** The message of the run (for a push that makes a commit at the source). */
  runMessage: string;
  signal: AbortSignal;
}

export interface SourceRequest {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Absolute, or relative to `ctx.apiBase`. */
  url: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  body?: Buffer;
  /** Statuses returned instead of thrown (e.g. 404 for a vanished item, 410 for an expired token). */
  accept?: number[];
}

export interface SourceResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json<T = unknown>(): T;
  text(): string;
}

/**
 * The only way a connector reaches its platform: authorized with the project's credential (the
 * connector's `authHeaders`), through the outbound guard, counted (`http_calls`), honoring 429
 * and `Retry-After` (counted in `rate_limited_ms`), retrying 5xx with backoff, and turning a 401
 * into one refresh and then `needs_reauth`. Other non-2xx answers throw a ProviderError with
 * the provider's own message, unless listed in `accept`.
 */
export interface SourceHttp {
  request(r: SourceRequest): Promise<SourceResponse>;
}
