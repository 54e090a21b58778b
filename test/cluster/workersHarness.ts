import Database from 'better-sqlite3';
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, type ServeProcess } from '../helpers/cli.ts';
import { databaseOfDataDir, releaseDatabaseOfDataDir } from '../helpers/serverDatabases.ts';
import { SUITE_SETTINGS } from '../helpers/testSettings.ts';

export const ADMIN = { email: 'workers@example.com', password: 'workers-password-1' };

export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** A `cns serve --workers N` process on its own data folder, talked to over real connections. */
export interface WorkersServer {
  url: string;
  dataDir: string;
  serve: ServeProcess;
  /** A request on `agent` (a keep-alive connection stays on one worker), or on a fresh connection. */
  api(method: string, path: string, o?: { token?: string; body?: unknown; agent?: Agent | false; timeoutMs?: number }): Promise<Answer>;
  /** A keep-alive connection that is served by the worker named `worker` (opened until one lands there). */
  connectionTo(worker: string): Promise<Agent>;
  health(agent?: Agent | false): Promise<{ worker: string; workers: { name: string; pid: number; restarts: number; projects: number }[] }>;
  token(): Promise<string>;
  /** A new project of the administrator's organization. */
  project(token: string, name: string): Promise<string>;
  /** SIGTERM; the data folder is removed afterwards unless `removeData` is false. */
  stop(removeData?: boolean): Promise<number | null>;
}

export async function startWorkers(workers = 2, env: Record<string, string> = {}): Promise<WorkersServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-workers-'));
  // On the suite's PostgreSQL pass the workers share a database of their own, as the servers of test/helpers/server.ts do.
  const engine = await databaseOfDataDir(dataDir);
  const serve = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--workers', String(workers)], {
    CNS_ADMIN_EMAIL: ADMIN.email,
    CNS_ADMIN_PASSWORD: ADMIN.password,
    ...SUITE_SETTINGS,
    ...engine,
    ...env,
  });
  const url = (await serve.waitFor(/listening on (http:\/\/\S+)/, 120_000))[1]!;
  // The service answers once its first worker is up; the others join as they start.
  const everyone = Date.now() + 120_000;
  for (;;) {
    const h = await fetch(`${url}/healthz`).then((r) => r.json() as Promise<{ data: { workers?: unknown[] } }>);
    if ((h.data.workers?.length ?? 1) >= workers) break;
    if (Date.now() > everyone) throw new Error(`only ${h.data.workers?.length} of ${workers} workers started`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const api: WorkersServer['api'] = (method, path, o = {}) =>
    new Promise((resolve, reject) => {
      const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
      const req = request(
        `${url}${path.startsWith('/healthz') || path.startsWith('/git/') ? '' : '/api/v1'}${path}`,
        {
          method,
          agent: o.agent ?? false,
          headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON: kept as text
            }
            resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      // A connection cut by a killed worker may also just stop answering: give up like a client would.
      req.setTimeout(o.timeoutMs ?? 30_000, () => req.destroy(new Error('timed out')));
      req.end(payload);
    });
  const health: WorkersServer['health'] = async (agent = false) => (await api('GET', '/healthz', { agent })).body.data;
  let token: string | null = null;
  let orgId: string | null = null;
  const server: WorkersServer = {
    url,
    dataDir,
    serve,
    api,
    health,
    async connectionTo(worker) {
      for (let i = 0; i < 50; i++) {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        if ((await health(agent)).worker === worker) return agent;
        agent.destroy();
      }
      throw new Error(`no connection reached ${worker}`);
    },
    async token() {
      if (token) return token;
      const login = await api('POST', '/auth/login', { body: ADMIN });
      if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
      token = login.body.data.access_token as string;
      const init = await api('POST', '/auth/initialize', { token });
      orgId = init.body.data.organization.id;
      return token;
    },
    async project(t, name) {
      await server.token();
      const res = await api('POST', '/projects', { token: t, body: { name, org_id: orgId } });
      if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    },
    async stop(removeData = true) {
      serve.child.kill('SIGTERM');
      const code = await serve.exited;
      if (removeData) {
        rmSync(dataDir, { recursive: true, force: true });
        await releaseDatabaseOfDataDir(dataDir);
      }
      return code;
    },
  };
  return server;
}

/** The worker (w1, w2…) holding a project's lease, read from the box's database. */
export function ownerOf(dataDir: string, projectId: string): string | null {
  const db = new Database(join(dataDir, 'cns.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT holder FROM project_leases WHERE project_id = ?').get(projectId) as { holder: string } | undefined;
    return row ? row.holder.split('.')[1]! : null;
  } finally {
    db.close();
  }
}
