import type { ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import nock from 'nock';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../src/app/server.ts';
import { loadSettings } from '../../../src/config/settings.ts';
import type { ApiResponse } from '../../helpers/server.ts';

export const ADMIN = { email: 'oauth-admin@example.com', password: 'admin-password-1' };

/** OAuth apps of the four providers, as the settings take them. */
export const APPS = {
  github: { id: 'gh-client-id', secret: 'gh-client-secret-7f3a' },
  notion: { id: 'notion-client-id', secret: 'notion-client-secret-91c2' },
  linear: { id: 'linear-client-id', secret: 'linear-client-secret-5d0e' },
  airtable: { id: 'airtable-client-id', secret: 'airtable-client-secret-c4b8' },
} as const;

export function appEnv(providers: (keyof typeof APPS)[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const p of providers) {
    env[`CNS_OAUTH_${p.toUpperCase()}_CLIENT_ID`] = APPS[p].id;
    env[`CNS_OAUTH_${p.toUpperCase()}_CLIENT_SECRET`] = APPS[p].secret;
  }
  return env;
}

export interface OAuthTestServer {
  running: RunningServer;
  dataDir: string;
  /** Every log line the server wrote (level trace). */
  logs: string[];
  api(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<ApiResponse>;
  /** A browser's GET: no credential, redirects not followed, the body as text. */
  browse(url: string): Promise<{ status: number; headers: Headers; text: string }>;
  login(email: string, password: string): Promise<string>;
  /** A new user, signed in, with the default organization and project of their own. */
  user(email: string): Promise<{ token: string; id: string; projectId: string }>;
  stop(): Promise<void>;
}

/**
 * A real server (ephemeral port on 127.0.0.1, fresh data folder) whose logs are captured, with the
 * OAuth apps of `env`. The public URL names the loopback address, so the callback URL the
 * providers get is one this test can browse.
 */
export async function startOAuthServer(env: Record<string, string>, options: { dataDir?: string; keepData?: boolean } = {}): Promise<OAuthTestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'cns-oauth-'));
  const logs: string[] = [];
  const capture = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const settings = loadSettings(
    {
      CNS_ADMIN_EMAIL: ADMIN.email,
      CNS_ADMIN_PASSWORD: ADMIN.password,
      CNS_RATE_LIMIT_MAX: '0',
      CNS_LOGIN_RATE_LIMIT_MAX: '0',
      CNS_BASE_URL: 'http://127.0.0.1:0',
      ...env,
    },
    { host: '127.0.0.1', port: 0, dataDir },
  );
  const running = await startServer(settings, pino({ level: 'trace' }, capture));

  const api: OAuthTestServer['api'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${running.url}/api/v1${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = res.text;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body };
  };
  const login = async (email: string, password: string) => {
    const res = await api('POST', '/auth/login', { body: { email, password } });
    if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
    return res.body.data.access_token as string;
  };
  return {
    running,
    dataDir,
    logs,
    api,
    login,
    browse: (url) => request(url, { method: 'GET', headers: {} }),
    async user(email) {
      const u = await running.services.users.create({ email, password: 'user-password-1' });
      const token = await login(email, 'user-password-1');
      const init = await api('POST', '/auth/initialize', { token });
      return { token, id: u.id, projectId: init.body.data.project.id };
    },
    async stop() {
      await running.close();
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A plain HTTP request to the test's server. Not fetch: nock 15 (through @mswjs/interceptors)
 * wraps the global fetch, whose request bodies it cannot pass through on this Node.
 */
function request(url: string, o: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method, headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode!, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The provider hosts answer only what a test declares; the test's own server stays reachable. */
export function isolateNetwork(): void {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
}

/** One request a nock'd provider received. */
export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  /** Form and JSON bodies parsed; anything else as text. */
  body: Record<string, unknown> | string;
}

type Answer = [number, unknown?, Record<string, string>?];

/**
 * A nock reply function (nock 15 hands it the request as a Fetch Request) that records the
 * request, then answers what `answer` returns.
 */
export function recorder(seen: Seen[], answer: (req: Seen) => Answer): (request: Request) => Promise<Answer> {
  return async (request) => {
    const text = await request.text();
    let body: Record<string, unknown> | string = text;
    if (text === '') body = '';
    else if ((request.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text) as Record<string, unknown>;
    else if ((request.headers.get('content-type') ?? '').includes('x-www-form-urlencoded')) body = Object.fromEntries(new URLSearchParams(text));
    const req: Seen = { method: request.method, url: new URL(request.url), headers: request.headers, body };
    seen.push(req);
    return answer(req);
  };
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The provider sends the browser back: the callback URL the authorization URL names, with the code and the state. */
export function providerRedirect(authorizationUrl: string, code: string): string {
  const auth = new URL(authorizationUrl);
  const back = new URL(auth.searchParams.get('redirect_uri')!);
  back.searchParams.set('code', code);
  back.searchParams.set('state', auth.searchParams.get('state')!);
  return back.toString();
}

/**
 * None of `secrets` is in the SQLite files (database, WAL) nor in the captured log lines:
 * tokens are stored sealed and never logged.
 */
export function assertNoSecrets(t: ExecutionContext, server: OAuthTestServer, secrets: string[]): void {
  t.true(secrets.length > 0);
  const files = ['cns.db', 'cns.db-wal'].map((f) => join(server.dataDir, f)).filter((f) => existsSync(f));
  t.true(files.some((f) => f.endsWith('cns.db')));
  const logs = server.logs.join('');
  t.true(logs.includes('oauth connected'), 'the OAuth service logged its work');
  for (const secret of secrets) {
    for (const f of files) t.false(readFileSync(f).includes(secret), `${secret} is in ${f}`);
    t.false(logs.includes(secret), `${secret} is in the logs`);
  }
}
