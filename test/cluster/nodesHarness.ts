import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, type ServeProcess } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';
import { SUITE_SETTINGS } from '../helpers/testSettings.ts';

/** A free TCP port of this machine on `host` (the node's address must be known before it starts: other nodes reach it there). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, host, r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface NodesCluster {
  nats: NatsCluster;
  databaseUrl: string;
  /** The running nodes by id (a stopped one is absent). */
  nodes: Map<string, TestServer>;
  node(id: string): TestServer;
  /** Starts (or starts again) node `id` on its own data folder and port. */
  start(id: string): Promise<TestServer>;
  /** A clean stop of node `id`. */
  stop(id: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Nodes of one cluster in this test process (docs/design/cluster.md §9): a 3-server NATS
 * JetStream cluster on ports of its own, a fresh migrated PostgreSQL database, and `cns` servers
 * each with its own data folder (one shared signing.key) and port, with fast timings.
 */
export function nodesCluster(after: (fn: () => Promise<unknown>) => void, o: { replicas?: number } = {}): () => Promise<NodesCluster> {
  const migrated = migratedDatabases(after);
  const open: NodesCluster[] = [];
  after(async () => {
    for (const c of open.splice(0)) await c.close();
  });
  return async () => {
    const nats = await startNatsCluster(3);
    const db = await migrated();
    const key = randomBytes(48).toString('base64');
    const folders = new Map<string, { dir: string; port: number }>();
    const nodes = new Map<string, TestServer>();
    const c: NodesCluster = {
      nats,
      databaseUrl: db.url,
      nodes,
      node(id) {
        const n = nodes.get(id);
        if (!n) throw new Error(`node ${id} is not running`);
        return n;
      },
      async start(id) {
        let f = folders.get(id);
        if (!f) {
          const dir = mkdtempSync(join(tmpdir(), `cns-${id}-`));
          writeFileSync(join(dir, 'signing.key'), key + '\n', { mode: 0o600 });
          f = { dir, port: await freePort() };
          folders.set(id, f);
        }
        const server = await startTestServer(
          { dataDir: f.dir, port: f.port },
          {
            CNS_DATABASE_URL: db.url,
            CNS_DATABASE_POOL: '4',
            CNS_BUS_URL: nats.urls.join(','),
            CNS_NODE_ID: id,
            CNS_NODE_URL: `http://127.0.0.1:${f.port}`,
            CNS_REPLICAS: String(o.replicas ?? 3),
            CNS_CLUSTER_HEARTBEAT_MS: '100',
            // Long enough that late beats of three nodes sharing one busy test process never fail a live
            // node over (the failover test stops its primary cleanly: marked down at once).
            CNS_CLUSTER_DOWN_AFTER_MS: '5000',
            CNS_REPLICATION_TIMEOUT_MS: '5000',
          },
        );
        nodes.set(id, server);
        return server;
      },
      async stop(id) {
        const n = nodes.get(id);
        nodes.delete(id);
        await n?.stop();
      },
      async close() {
        for (const id of [...nodes.keys()]) await c.stop(id);
        await nats.stop();
        for (const f of folders.values()) rmSync(f.dir, { recursive: true, force: true });
      },
    };
    open.push(c);
    return c;
  };
}

/** A node of a cluster run as a real `cns serve` process (SpawnedNodes). */
export interface SpawnedNode {
  id: string;
  dir: string;
  /** Where it listens, and where the other nodes reach it (CNS_NODE_URL). */
  host: string;
  port: number;
  /** The command that runs it (a network namespace's `ip netns exec <name>`: test/helpers/netns.ts). */
  prefix?: string[];
  /** The address the test's requests to it come from (a namespace's client address). */
  localAddress?: string;
  proc: ServeProcess | null;
}

export interface ApiAnswer {
  status: number;
  body: any;
}

const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';

/**
 * The nodes of a cluster as real `cns serve` processes, for the fault tests (nodesFaults,
 * nodesPartition): each with its own data folder and port and one shared signing.key, on the
 * test's own NATS servers and PostgreSQL database, with fast timings; and the client side the
 * tests share (requests through any node, a stream of writes, reading writes back).
 */
export class SpawnedNodes {
  readonly nodes = new Map<string, SpawnedNode>();
  private readonly key = randomBytes(48).toString('base64');
  private readonly agent = new Agent({ keepAlive: true });
  private admin: { token: string; orgId: string } | null = null;

  constructor(private readonly o: { databaseUrl: string; busUrls: string[] }) {}

  node(id: string): SpawnedNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** A new node `id` (a data folder of its own), started; resolves once it listens. */
  async add(id: string, where: { host?: string; prefix?: string[]; localAddress?: string } = {}): Promise<SpawnedNode> {
    const dir = mkdtempSync(join(tmpdir(), `cns-${id}-`));
    writeFileSync(join(dir, 'signing.key'), this.key + '\n', { mode: 0o600 });
    const host = where.host ?? '127.0.0.1';
    // A node in a network namespace of its own finds every port free there.
    const port = await freePort(where.prefix ? '127.0.0.1' : host);
    this.nodes.set(id, { id, dir, host, port, prefix: where.prefix, localAddress: where.localAddress, proc: null });
    await this.start(id);
    return this.node(id);
  }

  async start(id: string): Promise<void> {
    const n = this.node(id);
    n.proc = spawnServe(
      ['--port', String(n.port), '--host', n.host, '--data-dir', n.dir],
      {
        ...SUITE_SETTINGS,
        CNS_ADMIN_EMAIL: EMAIL,
        CNS_ADMIN_PASSWORD: PASSWORD,
        CNS_DATABASE_URL: this.o.databaseUrl,
        CNS_DATABASE_POOL: '4',
        CNS_BUS_URL: this.o.busUrls.join(','),
        CNS_NODE_ID: id,
        CNS_NODE_URL: `http://${n.host}:${n.port}`,
        CNS_CLUSTER_HEARTBEAT_MS: '100',
        // 2 s: a node killed is failed over within seconds, and late beats on a busy CI machine are not taken for a death.
        CNS_CLUSTER_DOWN_AFTER_MS: '2000',
        CNS_REPLICATION_TIMEOUT_MS: '3000',
      },
      { prefix: n.prefix },
    );
    await n.proc.waitFor(/listening on/);
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(id: string): Promise<void> {
    const n = this.node(id);
    n.proc?.child.kill('SIGKILL');
    await n.proc?.exited;
    n.proc = null;
  }

  /** Kills every node and removes their data folders. */
  async close(): Promise<void> {
    for (const n of this.nodes.values()) {
      await this.kill(n.id);
      rmSync(n.dir, { recursive: true, force: true });
    }
    this.agent.destroy();
  }

  /** A request through node `id`; status 0 when it failed or got no answer within `timeoutMs` (no answer is no acknowledgement). */
  api(id: string, method: string, path: string, o: { token?: string; body?: unknown; timeoutMs?: number } = {}): Promise<ApiAnswer> {
    const n = this.node(id);
    const data = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    return new Promise((resolve) => {
      const req = request(
        {
          host: n.host,
          port: n.port,
          localAddress: n.localAddress,
          method,
          path: `/api/v1${path}`,
          agent: this.agent,
          timeout: o.timeoutMs ?? 15_000,
          headers: { ...(data && { 'content-type': 'application/json', 'content-length': String(data.length) }), ...(o.token && { authorization: `Bearer ${o.token}` }) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: unknown = null;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              body = Buffer.concat(chunks).toString('utf8');
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on('error', () => resolve({ status: 0, body: null }));
        },
      );
      // A node killed under the request: no answer is no acknowledgement.
      req.on('error', () => resolve({ status: 0, body: null }));
      req.on('timeout', () => req.destroy());
      req.end(data);
    });
  }

  /** The administrator's token and organization (set up once), and a new project created through `via`: placed on `via`. */
  async session(via: string, name = 'faults'): Promise<{ token: string; projectId: string }> {
    if (!this.admin) {
      const login = await this.api(via, 'POST', '/auth/login', { body: { email: EMAIL, password: PASSWORD } });
      const token = login.body.data.access_token as string;
      const init = await this.api(via, 'POST', '/auth/initialize', { token });
      if (init.status !== 200 && init.status !== 201) throw new Error(`initialize failed: ${JSON.stringify(init.body)}`);
      this.admin = { token, orgId: init.body.data.organization.id as string };
    }
    const created = await this.api(via, 'POST', '/projects/', { token: this.admin.token, body: { name: `${name}-${Date.now()}`, org_id: this.admin.orgId } });
    if (created.status !== 201 && created.status !== 200) throw new Error(`project not created: ${JSON.stringify(created.body)}`);
    return { token: this.admin.token, projectId: created.body.data.id as string };
  }

  /**
   * Writes one new file every 50 ms (20 writes/s) through `via` until stopped; records what was
   * acknowledged, and the content of every file it tried to write. `timeoutMs`: how long a write
   * may go unanswered (it then counts as status 0).
   */
  writeStream(via: () => string, token: string, projectId: string, tag: string, o: { timeoutMs?: number } = {}) {
    const acknowledged: string[] = [];
    const contents = new Map<string, string>();
    const statuses = new Map<number, number>();
    let stop = false;
    let i = 0;
    const done = (async () => {
      while (!stop) {
        const path = `${tag}/w${i++}.md`;
        const content = `${tag} ${i}`;
        contents.set(path, content);
        const began = Date.now();
        const w = await this.api(via(), 'POST', `/content/${projectId}/write`, { token, body: { path, content, node_type: 'markdown' }, timeoutMs: o.timeoutMs });
        statuses.set(w.status, (statuses.get(w.status) ?? 0) + 1);
        if (w.status === 200 || w.status === 201) acknowledged.push(path);
        await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - began))));
      }
    })();
    return {
      acknowledged,
      contents,
      statuses,
      /** Every path it tried that was not acknowledged. */
      unacknowledged: () => [...contents.keys()].filter((p) => !acknowledged.includes(p)),
      count: () => acknowledged.length,
      async stop() {
        stop = true;
        await done;
      },
    };
  }

  /**
   * The paths not read back through `via` (with the status), or read with other content than
   * `contents` gives. A 503 says "retry" (Retry-After: a node just resumed, a placement a second
   * old): it is retried for a few seconds, as clients do.
   */
  async readable(via: string, token: string, projectId: string, paths: string[], contents?: Map<string, string>): Promise<string[]> {
    const missing: string[] = [];
    for (const path of paths) {
      let r = await this.api(via, 'GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
      for (let tries = 0; r.status === 503 && tries < 50; tries++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await this.api(via, 'GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
      }
      if (r.status !== 200) missing.push(`${path} (${r.status})`);
      else if (contents?.has(path) && r.body?.data?.content !== contents.get(path)) missing.push(`${path} (content ${JSON.stringify(r.body?.data?.content)})`);
    }
    return missing;
  }
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after `ms`. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
