import { createHash } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { clusterEnvShape, clusterSettingsOf, type ClusterSettings } from './clusterSettings.ts';
import { parseDatabaseUrl, type DatabaseUrl } from './databaseUrl.ts';
import { bool, int, oneOf, url } from './settingKinds.ts';

/**
 * Every setting of the service, read from environment variables (flags of `cns serve`
 * override them). The README's settings table documents each one; keep the two in step.
 */
export interface Settings {
  host: string;
  port: number;
  dataDir: string;
  baseUrl: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  logLevel: string;
  signupOpen: boolean;
  bodyLimitBytes: number;
  maxContentBytes: number;
  maxUploadBytes: number;
  /** Archive imports (POST /content/{id}/import): the most entries and inflated bytes one archive may hold (the zip-bomb guard). */
  importMaxFiles: number;
  importMaxBytes: number;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  loginRateLimitMax: number;
  loginRateLimitWindowMs: number;
  /** Login attempts per client address per window, whatever the email (each costs a full scrypt). */
  loginAddressRateLimitMax: number;
  /** log2 of scrypt's N for new password hashes (each costs 128 · N · 8 bytes and ~N/650 ms of CPU here). */
  passwordHashCost: number;
  /** Open event streams (GET /events) one credential may hold at a time. */
  maxEventStreams: number;
  fsync: boolean;
  repackEvery: number;
  urlFetchAllowPrivate: boolean;
  /** Answers also carry PuppyOne's duplicate field names (`items`, `entries`, `preview_md`, …): a list answer about twice the bytes. */
  puppyOneCompat: boolean;
  /** Keep the blame of every this many versions of a text node, so a blame walks at most that many (0: never). */
  blameCheckpointEvery: number;
  /** Worker processes of `cns serve` (CNS_WORKERS / --workers): 'auto' is the available cores, at most 8; 1 is one process. */
  workers: number;
  /** CNS_DATABASE_URL: the metadata store on PostgreSQL (parsed; its `redacted` form is what may be shown). Null: SQLite in the data folder. */
  databaseUrl: DatabaseUrl | null;
  /** PostgreSQL connections the whole service may hold (CNS_DATABASE_POOL), shared out among its workers: see poolPerProcess. */
  databasePool: number;
  /** PostgreSQL stops any metadata statement running longer (CNS_DATABASE_STATEMENT_TIMEOUT_MS). */
  databaseStatementTimeoutMs: number;
  /** A node of a cluster (CNS_BUS_URL and the settings that go with it, docs/design/cluster.md); null: a service of its own, as before. */
  cluster: ClusterSettings | null;
  /** Worker threads answering search queries (unset: one per core, at most 4). */
  searchThreads: number | undefined;
  /** An OpenAI-compatible /v1/embeddings provider for hybrid search (unset: search is lexical). */
  embeddings: { baseUrl: string; model: string; apiKey: string | undefined; dimensions: number | undefined } | null;
  /** What runs sandboxed commands: bubblewrap, the in-process just-bash, or bubblewrap when it works. */
  sandbox: 'auto' | 'bwrap' | 'just-bash';
  /** Sandboxed commands running at once (more wait; past four times as many waiting, 429). */
  sandboxMaxRuns: number;
  /**
   * Where sandbox working folders live. Outside the data folder by default: the data folder stays
   * private (mode 0700) while the sandbox's unprivileged user must reach its working folders.
   */
  sandboxDir: string;
  /**
   * Language-model providers of agent chat (their official SDKs): OpenAI and OpenAI-compatible
   * servers (any `prefix:model` other than anthropic goes to the OpenAI base URL), and Anthropic.
   */
  /** Usage analytics: count public views and API calls (CNS_ANALYTICS=false counts nothing). */
  analytics: boolean;
  /** How often the analytics counts kept in memory are written to SQLite (and always at shutdown). */
  analyticsFlushMs: number;
  llm: {
    openai: { apiKey?: string; baseUrl?: string };
    anthropic: { apiKey?: string; baseUrl?: string };
    /** The model of new agents that name none, `provider:model`. */
    defaultModel: string;
  };
  /** Ingestion (spec 4.10): conversion workers and the limits of uploads, URL crawls and zip expansion. */
  ingest: {
    /** Tasks (and conversions) running at once. */
    workers: number;
    maxFileBytes: number;
    /** Files one submission may carry. */
    maxFiles: number;
    /** Pages one URL submission may fetch (the default and the most `max_pages` may ask). */
    maxPages: number;
    /** Per URL fetched, headers and body. */
    urlTimeoutMs: number;
    /** Total decompressed size of a DOCX/XLSX, or of a PDF's streams counted once per use (the bomb guards). */
    maxDecompressedBytes: number;
    /** Pages a PDF may have (CNS_INGEST_MAX_PDF_PAGES). */
    maxPdfPages: number;
    /** Wall-clock time one conversion may take before its process is killed (CNS_INGEST_CONVERSION_TIMEOUT_S). */
    conversionTimeoutMs: number;
  };
  /** Database connectors (spec 4.10): where connections may go, the SQLite folder, and every session's bounds. */
  dbConnectors: {
    /** Loopback database hosts (CNS_DB_ALLOW_LOOPBACK); link-local and metadata addresses are refused whatever this says. */
    allowLoopback: boolean;
    /** The folder SQLite files are read from (CNS_DB_SQLITE_DIR); null turns SQLite connections off. */
    sqliteDir: string | null;
    statementTimeoutMs: number;
    /** Rows a save may read (CNS_DB_MAX_ROWS); a larger `limit` is refused. */
    maxRows: number;
  };
  /**
   * OAuth apps of the platforms syncs connect to (spec 4.10), by client name:
   * CNS_OAUTH_<NAME>_CLIENT_ID and CNS_OAUTH_<NAME>_CLIENT_SECRET. A name is absent until both are set.
   */
  oauthClients: Partial<Record<OAuthClientName, { clientId: string; clientSecret: string }>>;
  /** The platform sync runtime (issue 16): runs at once, shortest interval, and each provider's API address. */
  sync: {
    /** Runs of all syncs going at once (CNS_SYNC_MAX_CONCURRENT_RUNS); more wait in a queue. */
    maxConcurrentRuns: number;
    /** Shortest `interval_s` of an interval sync (CNS_SYNC_MIN_INTERVAL_S; 30 unless lowered, for tests). */
    minIntervalS: number;
    /** API base by provider (CNS_<PROVIDER>_API_URL), for a proxy, an enterprise host or a test double. */
    apiBase: Record<string, string>;
    /** Webhook deliveries remembered per sync, so a replay starts no run (CNS_SYNC_WEBHOOK_REMEMBER, CNS_SYNC_WEBHOOK_REMEMBER_S). */
    webhookRemember: { maxPerSync: number; maxAgeMs: number };
  };
  /** Outgoing webhooks (issue 33): how long one attempt may take, how retries back off, when to give up. */
  webhooks: {
    /** One attempt, connection to the end of the answer (CNS_WEBHOOK_TIMEOUT_MS). */
    timeoutMs: number;
    /** The first retry's delay, doubled at each further one (CNS_WEBHOOK_BACKOFF_MS) up to backoffMaxMs (CNS_WEBHOOK_BACKOFF_MAX_MS). */
    backoffMs: number;
    backoffMaxMs: number;
    /** A delivery is retried this long after its first attempt, then failed (CNS_WEBHOOK_RETRY_FOR_S). */
    retryForMs: number;
    /** A hook failing this long in a row is disabled (CNS_WEBHOOK_DISABLE_AFTER_S). */
    disableAfterMs: number;
    /** Paths listed in one delivery; more are counted (CNS_WEBHOOK_MAX_PATHS). */
    maxPaths: number;
    /** Deliveries in flight at once, all hooks together (CNS_WEBHOOK_CONCURRENCY). */
    concurrency: number;
    /** Finished deliveries kept per hook in its log (CNS_WEBHOOK_KEEP_DELIVERIES); pending ones always stay. */
    keepDeliveries: number;
    /** Commits read per changelog query while queuing a backlog (no variable: tests make it small to cross batches cheaply). */
    queueBatch?: number;
  };
}

/** The OAuth apps the settings know (one app may serve several providers, as Google's will). */
export const oauthClientNames = ['github', 'notion', 'linear', 'airtable', 'google'] as const;
export type OAuthClientName = (typeof oauthClientNames)[number];

/** log2 of scrypt's N for new password hashes (16 MiB of memory with r = 8): CNS_PASSWORD_HASH_COST. */
export const DEFAULT_PASSWORD_HASH_COST = 14;

const envSchema = z.object({
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: int(0, 65535).default(8080),
  CNS_DATA_DIR: z.string().min(1).default('./repos'),
  CNS_BASE_URL: url().optional(),
  CNS_ADMIN_EMAIL: z.string().email('must be an email address').optional(),
  CNS_ADMIN_PASSWORD: z.string().min(8, 'must have at least 8 characters').optional(),
  CNS_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CNS_SIGNUP_OPEN: bool.default(false),
  CNS_BODY_LIMIT_BYTES: int(1024).default(32 * 1024 * 1024),
  CNS_MAX_CONTENT_BYTES: int(1).default(10 * 1024 * 1024),
  CNS_MAX_UPLOAD_BYTES: int(0).default(1024 * 1024 * 1024),
  CNS_IMPORT_MAX_FILES: int(1).default(100_000),
  CNS_IMPORT_MAX_BYTES: int(1).default(1024 * 1024 * 1024),
  CNS_ACCESS_TOKEN_TTL: int(60).default(3600),
  CNS_REFRESH_TOKEN_TTL: int(60).default(30 * 24 * 3600),
  CNS_RATE_LIMIT_MAX: int(0).default(3000),
  CNS_RATE_LIMIT_WINDOW_MS: int(1).default(60_000),
  CNS_LOGIN_RATE_LIMIT_MAX: int(0).default(10),
  CNS_LOGIN_RATE_LIMIT_WINDOW_MS: int(1).default(60_000),
  CNS_LOGIN_ADDRESS_RATE_LIMIT_MAX: int(0).optional(),
  CNS_PASSWORD_HASH_COST: int(10, 20).default(DEFAULT_PASSWORD_HASH_COST),
  CNS_MAX_EVENT_STREAMS: int(0).default(20),
  CNS_FSYNC: bool.default(false),
  CNS_REPACK_EVERY: int(0).default(2000),
  CNS_URL_FETCH_ALLOW_PRIVATE: bool.default(false),
  CNS_PUPPYONE_COMPAT: bool.default(false),
  CNS_BLAME_CHECKPOINT_EVERY: int(0).default(100),
  CNS_WORKERS: z
    .union([z.literal('auto'), z.string().regex(/^[1-9][0-9]*$/, 'must be auto or a whole number from 1 to 64').transform(Number).refine((n) => n <= 64, 'must be at most 64')])
    .default('auto'),
  // Parsed below by parseDatabaseUrl, whose messages never repeat the password.
  CNS_DATABASE_URL: z.string().optional(),
  CNS_DATABASE_POOL: int(2, 1000).default(20),
  CNS_DATABASE_STATEMENT_TIMEOUT_MS: int(100, 3_600_000).default(30_000),
  ...clusterEnvShape,
  CNS_EMBEDDINGS_BASE_URL: url().optional(),
  CNS_EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  CNS_EMBEDDINGS_API_KEY: z.string().optional(),
  CNS_EMBEDDINGS_DIMENSIONS: int(1, 4096).optional(),
  CNS_SEARCH_THREADS: int(1, 64).optional(),
  CNS_SANDBOX: oneOf(['auto', 'bwrap', 'just-bash']).default('auto'),
  CNS_SANDBOX_MAX_RUNS: int(1, 256).default(16),
  CNS_SANDBOX_DIR: z.string().min(1).optional(),
  CNS_ANALYTICS: bool.default(true),
  CNS_ANALYTICS_FLUSH_MS: int(100, 600_000).default(5000),
  CNS_OPENAI_API_KEY: z.string().optional(),
  CNS_OPENAI_BASE_URL: url().optional(),
  CNS_ANTHROPIC_API_KEY: z.string().optional(),
  CNS_ANTHROPIC_BASE_URL: url().optional(),
  CNS_INGEST_WORKERS: int(1, 64).default(2),
  CNS_INGEST_MAX_FILE_BYTES: int(1).default(50 * 1024 * 1024),
  CNS_INGEST_MAX_FILES: int(1, 10_000).default(100),
  CNS_INGEST_MAX_PAGES: int(1, 10_000).default(20),
  CNS_INGEST_URL_TIMEOUT_S: int(1, 3600).default(60),
  CNS_INGEST_MAX_DECOMPRESSED_BYTES: int(1).default(500 * 1024 * 1024),
  CNS_INGEST_MAX_PDF_PAGES: int(1).default(2000),
  CNS_INGEST_CONVERSION_TIMEOUT_S: int(1, 86_400).default(120),
  CNS_DB_ALLOW_LOOPBACK: bool.default(false),
  CNS_DB_SQLITE_DIR: z.string().min(1).optional(),
  CNS_DB_STATEMENT_TIMEOUT_MS: int(100, 3_600_000).default(10_000),
  CNS_DB_MAX_ROWS: int(1, 10_000_000).default(100_000),
  CNS_OAUTH_GITHUB_CLIENT_ID: z.string().optional(),
  CNS_OAUTH_GITHUB_CLIENT_SECRET: z.string().optional(),
  CNS_OAUTH_NOTION_CLIENT_ID: z.string().optional(),
  CNS_OAUTH_NOTION_CLIENT_SECRET: z.string().optional(),
  CNS_OAUTH_LINEAR_CLIENT_ID: z.string().optional(),
  CNS_OAUTH_LINEAR_CLIENT_SECRET: z.string().optional(),
  CNS_OAUTH_AIRTABLE_CLIENT_ID: z.string().optional(),
  CNS_OAUTH_AIRTABLE_CLIENT_SECRET: z.string().optional(),
  // One Google OAuth app serves gmail, google-drive, google-docs, google-sheets and google-calendar.
  CNS_OAUTH_GOOGLE_CLIENT_ID: z.string().optional(),
  CNS_OAUTH_GOOGLE_CLIENT_SECRET: z.string().optional(),
  CNS_SYNC_MAX_CONCURRENT_RUNS: int(1, 256).default(4),
  CNS_SYNC_MIN_INTERVAL_S: int(1, 86_400).default(30),
  CNS_SYNC_WEBHOOK_REMEMBER: int(1, 1_000_000).default(1000),
  CNS_SYNC_WEBHOOK_REMEMBER_S: int(1, 365 * 86_400).default(7 * 86_400),
  CNS_WEBHOOK_TIMEOUT_MS: int(100, 600_000).default(10_000),
  CNS_WEBHOOK_BACKOFF_MS: int(1, 3_600_000).default(1000),
  CNS_WEBHOOK_BACKOFF_MAX_MS: int(1, 86_400_000).default(3_600_000),
  CNS_WEBHOOK_RETRY_FOR_S: int(1, 30 * 86_400).default(86_400),
  CNS_WEBHOOK_DISABLE_AFTER_S: int(1, 30 * 86_400).default(86_400),
  CNS_WEBHOOK_MAX_PATHS: int(1, 10_000).default(100),
  CNS_WEBHOOK_CONCURRENCY: int(1, 256).default(16),
  CNS_WEBHOOK_KEEP_DELIVERIES: int(1, 1_000_000).default(1000),
  CNS_GITHUB_API_URL: url().default('https://api.github.com'),
  CNS_NOTION_API_URL: url().default('https://api.notion.com'),
  CNS_LINEAR_API_URL: url().default('https://api.linear.app'),
  CNS_AIRTABLE_API_URL: url().default('https://api.airtable.com'),
  CNS_GMAIL_API_URL: url().default('https://gmail.googleapis.com'),
  CNS_GOOGLE_DRIVE_API_URL: url().default('https://www.googleapis.com'),
  CNS_GOOGLE_DOCS_API_URL: url().default('https://docs.googleapis.com'),
  CNS_GOOGLE_SHEETS_API_URL: url().default('https://sheets.googleapis.com'),
  CNS_GOOGLE_CALENDAR_API_URL: url().default('https://www.googleapis.com'),
  CNS_DEFAULT_MODEL: z.string().regex(/^[a-z0-9][a-z0-9_.-]*:.+$/i, 'must be provider:model, such as openai:gpt-4.1-mini').default('openai:gpt-4.1-mini'),
});

export type EnvInput = Record<string, string | undefined>;

/** Where the settings come from besides the environment. */
export interface SettingsSource {
  /** The folder relative paths (CNS_DATA_DIR, …) are resolved against. */
  cwd?: string;
  /** How the user gave a variable when it was not as itself, `{ PORT: '--port' }`: errors name that. */
  givenAs?: Record<string, string>;
}

/** Values never repeated in an error message. */
const SECRET = /PASSWORD|SECRET|API_KEY|DATABASE_URL|BUS_URL/;

/** `--port must be a whole number from 0 to 65535 (got "x")`: the setting as the user gave it, what it expects, what it got. */
function describeIssue(issue: z.core.$ZodIssue, env: EnvInput, source: SettingsSource): string {
  const name = String(issue.path[0] ?? '');
  // The schema's own sentence; zod's default wording only for a check that has none.
  const expected = issue.message.startsWith('must ') ? issue.message : `is invalid: ${issue.message}`;
  const value = env[name];
  const got = value === undefined || SECRET.test(name) ? '' : ` (got ${JSON.stringify(value)})`;
  return `${source.givenAs?.[name] ?? name} ${expected}${got}`;
}

/** Builds the settings from an environment (blank values count as unset). Throws with every invalid variable named. */
export function loadSettings(env: EnvInput = process.env, overrides: Partial<Settings> = {}, source: SettingsSource = {}): Settings {
  const cwd = source.cwd ?? process.cwd();
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => describeIssue(i, cleaned, source)).join('; ');
    throw new Error(`Invalid settings: ${problems}`);
  }
  const e = parsed.data;
  let databaseUrl: DatabaseUrl | null = null;
  let cluster: ClusterSettings | null = null;
  try {
    databaseUrl = e.CNS_DATABASE_URL === undefined ? null : parseDatabaseUrl(e.CNS_DATABASE_URL);
    cluster = clusterSettingsOf(e, databaseUrl !== null);
    // A node of a cluster runs one process in this version: its routing between nodes and its replication live in that process.
    if (cluster && e.CNS_WORKERS !== 'auto' && e.CNS_WORKERS > 1) throw new Error('CNS_WORKERS must be 1 (or auto) on a node of a cluster: a node runs one process in this version');
  } catch (err) {
    throw new Error(`Invalid settings: ${(err as Error).message}`);
  }
  const port = overrides.port ?? e.PORT;
  const settings: Settings = {
    host: e.HOST,
    port,
    dataDir: resolve(cwd, e.CNS_DATA_DIR),
    baseUrl: (e.CNS_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    adminEmail: e.CNS_ADMIN_EMAIL,
    adminPassword: e.CNS_ADMIN_PASSWORD,
    logLevel: e.CNS_LOG_LEVEL,
    signupOpen: e.CNS_SIGNUP_OPEN,
    bodyLimitBytes: e.CNS_BODY_LIMIT_BYTES,
    maxContentBytes: e.CNS_MAX_CONTENT_BYTES,
    maxUploadBytes: e.CNS_MAX_UPLOAD_BYTES,
    importMaxFiles: e.CNS_IMPORT_MAX_FILES,
    importMaxBytes: e.CNS_IMPORT_MAX_BYTES,
    accessTokenTtlSeconds: e.CNS_ACCESS_TOKEN_TTL,
    refreshTokenTtlSeconds: e.CNS_REFRESH_TOKEN_TTL,
    rateLimitMax: e.CNS_RATE_LIMIT_MAX,
    rateLimitWindowMs: e.CNS_RATE_LIMIT_WINDOW_MS,
    loginRateLimitMax: e.CNS_LOGIN_RATE_LIMIT_MAX,
    loginRateLimitWindowMs: e.CNS_LOGIN_RATE_LIMIT_WINDOW_MS,
    // Unset: three times the per-email cap (so disabling login limits disables both).
    loginAddressRateLimitMax: e.CNS_LOGIN_ADDRESS_RATE_LIMIT_MAX ?? 3 * e.CNS_LOGIN_RATE_LIMIT_MAX,
    passwordHashCost: e.CNS_PASSWORD_HASH_COST,
    maxEventStreams: e.CNS_MAX_EVENT_STREAMS,
    fsync: e.CNS_FSYNC,
    repackEvery: e.CNS_REPACK_EVERY,
    urlFetchAllowPrivate: e.CNS_URL_FETCH_ALLOW_PRIVATE,
    puppyOneCompat: e.CNS_PUPPYONE_COMPAT,
    blameCheckpointEvery: e.CNS_BLAME_CHECKPOINT_EVERY,
    workers: cluster ? 1 : e.CNS_WORKERS === 'auto' ? Math.min(availableParallelism(), 8) : e.CNS_WORKERS,
    databaseUrl,
    databasePool: e.CNS_DATABASE_POOL,
    databaseStatementTimeoutMs: e.CNS_DATABASE_STATEMENT_TIMEOUT_MS,
    cluster,
    searchThreads: e.CNS_SEARCH_THREADS,
    embeddings: e.CNS_EMBEDDINGS_BASE_URL
      ? { baseUrl: e.CNS_EMBEDDINGS_BASE_URL.replace(/\/+$/, ''), model: e.CNS_EMBEDDINGS_MODEL, apiKey: e.CNS_EMBEDDINGS_API_KEY, dimensions: e.CNS_EMBEDDINGS_DIMENSIONS }
      : null,
    sandbox: e.CNS_SANDBOX,
    sandboxMaxRuns: e.CNS_SANDBOX_MAX_RUNS,
    sandboxDir: e.CNS_SANDBOX_DIR ? resolve(cwd, e.CNS_SANDBOX_DIR) : '',
    analytics: e.CNS_ANALYTICS,
    analyticsFlushMs: e.CNS_ANALYTICS_FLUSH_MS,
    llm: {
      openai: { apiKey: e.CNS_OPENAI_API_KEY, baseUrl: e.CNS_OPENAI_BASE_URL?.replace(/\/+$/, '') },
      anthropic: { apiKey: e.CNS_ANTHROPIC_API_KEY, baseUrl: e.CNS_ANTHROPIC_BASE_URL?.replace(/\/+$/, '') },
      defaultModel: e.CNS_DEFAULT_MODEL,
    },
    ingest: {
      workers: e.CNS_INGEST_WORKERS,
      maxFileBytes: e.CNS_INGEST_MAX_FILE_BYTES,
      maxFiles: e.CNS_INGEST_MAX_FILES,
      maxPages: e.CNS_INGEST_MAX_PAGES,
      urlTimeoutMs: e.CNS_INGEST_URL_TIMEOUT_S * 1000,
      maxDecompressedBytes: e.CNS_INGEST_MAX_DECOMPRESSED_BYTES,
      maxPdfPages: e.CNS_INGEST_MAX_PDF_PAGES,
      conversionTimeoutMs: e.CNS_INGEST_CONVERSION_TIMEOUT_S * 1000,
    },
    dbConnectors: {
      allowLoopback: e.CNS_DB_ALLOW_LOOPBACK,
      sqliteDir: e.CNS_DB_SQLITE_DIR ? resolve(cwd, e.CNS_DB_SQLITE_DIR) : null,
      statementTimeoutMs: e.CNS_DB_STATEMENT_TIMEOUT_MS,
      maxRows: e.CNS_DB_MAX_ROWS,
    },
    oauthClients: oauthClientsOf(e as Record<string, unknown>),
    sync: {
      maxConcurrentRuns: e.CNS_SYNC_MAX_CONCURRENT_RUNS,
      minIntervalS: e.CNS_SYNC_MIN_INTERVAL_S,
      webhookRemember: { maxPerSync: e.CNS_SYNC_WEBHOOK_REMEMBER, maxAgeMs: e.CNS_SYNC_WEBHOOK_REMEMBER_S * 1000 },
      apiBase: {
        github: e.CNS_GITHUB_API_URL.replace(/\/+$/, ''),
        notion: e.CNS_NOTION_API_URL.replace(/\/+$/, ''),
        linear: e.CNS_LINEAR_API_URL.replace(/\/+$/, ''),
        airtable: e.CNS_AIRTABLE_API_URL.replace(/\/+$/, ''),
        gmail: e.CNS_GMAIL_API_URL.replace(/\/+$/, ''),
        'google-drive': e.CNS_GOOGLE_DRIVE_API_URL.replace(/\/+$/, ''),
        'google-docs': e.CNS_GOOGLE_DOCS_API_URL.replace(/\/+$/, ''),
        'google-sheets': e.CNS_GOOGLE_SHEETS_API_URL.replace(/\/+$/, ''),
        'google-calendar': e.CNS_GOOGLE_CALENDAR_API_URL.replace(/\/+$/, ''),
      },
    },
    webhooks: {
      timeoutMs: e.CNS_WEBHOOK_TIMEOUT_MS,
      backoffMs: e.CNS_WEBHOOK_BACKOFF_MS,
      backoffMaxMs: e.CNS_WEBHOOK_BACKOFF_MAX_MS,
      retryForMs: e.CNS_WEBHOOK_RETRY_FOR_S * 1000,
      disableAfterMs: e.CNS_WEBHOOK_DISABLE_AFTER_S * 1000,
      maxPaths: e.CNS_WEBHOOK_MAX_PATHS,
      concurrency: e.CNS_WEBHOOK_CONCURRENCY,
      keepDeliveries: e.CNS_WEBHOOK_KEEP_DELIVERIES,
    },
  };
  const dataDir = resolve(cwd, overrides.dataDir ?? settings.dataDir);
  // One folder per data folder, so that two services on one machine never share workspaces.
  const sandboxDir = overrides.sandboxDir || settings.sandboxDir || join(tmpdir(), `cns-sandbox-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`);
  return { ...settings, ...overrides, dataDir, sandboxDir };
}

/**
 * The pool of one process: the service's budget (CNS_DATABASE_POOL) divided among its workers, at
 * least 2 each (one for a transaction, one for the reads beside it), so that workers × pool stays
 * near the budget whatever CNS_WORKERS says. Each process also holds one LISTEN connection.
 */
export function poolPerProcess(settings: Pick<Settings, 'databasePool' | 'workers'>): number {
  return Math.max(2, Math.floor(settings.databasePool / Math.max(1, settings.workers)));
}

function oauthClientsOf(e: Record<string, unknown>): Settings['oauthClients'] {
  const clients: Settings['oauthClients'] = {};
  for (const name of oauthClientNames) {
    const id = e[`CNS_OAUTH_${name.toUpperCase()}_CLIENT_ID`];
    const secret = e[`CNS_OAUTH_${name.toUpperCase()}_CLIENT_SECRET`];
    if (typeof id === 'string' && typeof secret === 'string') clients[name] = { clientId: id, clientSecret: secret };
  }
  return clients;
}
