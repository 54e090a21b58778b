import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CNS_BIN = fileURLToPath(new URL('../../bin/cns.js', import.meta.url));
/** A server that has not said it listens by then is killed, and its start fails. */
const START_WITHIN_MS = 120_000;

export interface BenchServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs `cns serve` in its own process so the load generator does not share its event loop.
 * `nodeArgs` go to that node process only (e.g. `--inspect`), not to processes it starts;
 * `bin` runs another checkout's `cns` (a before/after comparison in one run). `port`: 0 takes a
 * free one; a node of a cluster needs its address (CNS_NODE_URL) before it starts, so it is given.
 */
export async function startBenchServer(dataDir: string, env: Record<string, string> = {}, nodeArgs: string[] = [], bin = CNS_BIN, port = 0): Promise<BenchServer> {
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: {
      ...process.env,
      CNS_LOG_LEVEL: 'warn',
      CNS_RATE_LIMIT_MAX: '0',
      CNS_LOGIN_RATE_LIMIT_MAX: '0',
      CNS_ADMIN_EMAIL: 'bench@example.com',
      CNS_ADMIN_PASSWORD: 'bench-password',
      CNS_BODY_LIMIT_BYTES: String(256 * 1024 * 1024),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    // A server that neither listens nor exits (stuck joining a cluster) is not left behind.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not listen within ${START_WITHIN_MS / 1000} s: ${out}`));
    }, START_WITHIN_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      // BENCH_SERVER_LOG=1 shows the server's log lines (errors of a failing run).
      if (process.env.BENCH_SERVER_LOG) process.stderr.write(chunk);
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function api(url: string, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { success: boolean; data: any; message: string }; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.message}`);
  return json.data;
}

/** Signs in as the bench administrator and returns a token and a fresh project id. */
export async function benchProject(url: string): Promise<{ token: string; projectId: string }> {
  const login = await api(url, 'POST', '/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
  const init = await api(url, 'POST', '/auth/initialize', login.access_token);
  return { token: login.access_token, projectId: init.project.id };
}
