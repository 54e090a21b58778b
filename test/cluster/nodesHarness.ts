import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';

/** A free TCP port of this machine (the node's address must be known before it starts: other nodes reach it there). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
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
