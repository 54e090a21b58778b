import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../src/app/server.ts';
import { loadSettings, type Settings } from '../../src/config/settings.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { usesSandboxRoot } from './hostMounts.ts';
import { SUITE_SETTINGS } from './testSettings.ts';
import { databaseOfDataDir, releaseDatabaseOfDataDir } from './serverDatabases.ts';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-1';

export interface TestServer extends RunningServer {
  dataDir: string;
  /** The environment that names this server's metadata store (CNS_DATABASE_URL on PostgreSQL; empty on SQLite): admin commands run on its data folder need it too. */
  storeEnv: Record<string, string>;
  /** Calls the API; `path` is relative to /api/v1 unless it starts with '/healthz' or 'http'. */
  api(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string | Buffer }): Promise<ApiResponse>;
  /** Signs in and returns the access token (and the whole login result). */
  login(email?: string, password?: string): Promise<{ token: string; refresh: string; user: { id: string; email: string } }>;
  /** Creates a user through the store and signs in as them. */
  createUser(email: string, password?: string): Promise<{ token: string; id: string; email: string }>;
  stop(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A real server on an ephemeral port with a fresh temporary data folder. */
export async function startTestServer(overrides: Partial<Settings> = {}, env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'cns-test-'));
  // CNS_TEST_ENGINE=postgres: the metadata in a database of this data folder's own (a restart on it finds its records).
  const engine = env.CNS_DATABASE_URL === undefined ? await databaseOfDataDir(dataDir) : {};
  const settings = loadSettings(
    { CNS_ADMIN_EMAIL: ADMIN_EMAIL, CNS_ADMIN_PASSWORD: ADMIN_PASSWORD, ...SUITE_SETTINGS, ...engine, ...env },
    { host: '127.0.0.1', port: 0, dataDir, ...overrides },
  );
  usesSandboxRoot(settings.sandboxDir);
  let running: RunningServer;
  try {
    running = await startServer(settings, createLogger(process.env.CNS_TEST_LOG ?? 'silent'));
  } catch (e) {
    if (!overrides.dataDir) await releaseDatabaseOfDataDir(dataDir);
    throw e;
  }
  const base = running.url;

  // node:http with a keep-alive agent rather than fetch: undici's fetch costs the test process about
  // twice the CPU per request, and the suite makes tens of thousands of them.
  const agent = new Agent({ keepAlive: true });
  const api: TestServer['api'] = async (method, path, options = {}) => {
    const url = path.startsWith('http') ? path : path.startsWith('/healthz') ? base + path : `${base}/api/v1${path}`;
    // What fetch would send by default, but for compression: answers stay as the client reads them.
    const headers: Record<string, string> = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    // Explicit: node:http sends no length for a DELETE's body, which the server would then read as the next request.
    if (body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(body));
    const { status, rawHeaders, text } = await new Promise<{ status: number; rawHeaders: string[]; text: string }>((resolve, reject) => {
      const req = request(url, { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
    const responseHeaders = new Headers();
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) responseHeaders.append(rawHeaders[i]!, rawHeaders[i + 1]!);
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status, headers: responseHeaders, body: parsed };
  };

  const login: TestServer['login'] = async (email = ADMIN_EMAIL, password = ADMIN_PASSWORD) => {
    const res = await api('POST', '/auth/login', { body: { email, password } });
    if (res.status !== 200) throw new Error(`login failed for ${email}: ${res.status} ${JSON.stringify(res.body)}`);
    return { token: res.body.data.access_token, refresh: res.body.data.refresh_token, user: res.body.data.user };
  };

  const createUser: TestServer['createUser'] = async (email, password = 'user-password-1') => {
    const user = await running.services.users.create({ email, password });
    const { token } = await login(email, password);
    return { token, id: user.id, email };
  };

  const stop = async () => {
    agent.destroy();
    await running.close();
    if (overrides.dataDir) return; // the caller's folder (and its database) may be started again
    rmSync(dataDir, { recursive: true, force: true });
    await releaseDatabaseOfDataDir(dataDir);
  };

  const url = env.CNS_DATABASE_URL ?? (engine as Record<string, string>).CNS_DATABASE_URL;
  const storeEnv: Record<string, string> = url ? { CNS_DATABASE_URL: url } : {};
  return { ...running, dataDir, storeEnv, api, login, createUser, stop };
}
