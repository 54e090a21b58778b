import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './tempDirs.ts';

/**
 * `nats-server` processes of a test's own, on free ports (never the machine's shared server at
 * 4222): a JetStream cluster (`startNatsCluster`) or one plain server without JetStream
 * (`startPlainNatsServer`). Readiness is read from the servers' logs, with a deadline; every
 * process is killed when the test process exits, however it ends.
 */
const NATS_SERVER = '/usr/sbin/nats-server';
const READY_WITHIN_MS = 15_000;
const READY = 'Server is ready';
const META_LEADER = 'JetStream cluster new metadata leader';

export interface NatsCluster {
  /** The client URL of each server, `nats://<host>:<port>`. */
  urls: string[];
  /** SIGKILL of server `i`; resolves once it has exited. */
  kill(i: number): Promise<void>;
  /** Starts server `i` again on its ports and store (it must be down); resolves once it listens. */
  restart(i: number): Promise<void>;
  /** Kills every server and removes their stores; safe to call twice. */
  stop(): Promise<void>;
}

export interface PlainNatsServer {
  url: string;
  stop(): Promise<void>;
}

let clusters = 0;
const running = new Set<ChildProcess>();
let exitHooked = false;

/**
 * Starts `n` JetStream servers routed to each other; resolves once each listens and a metadata
 * leader is elected. They listen on `host` (127.0.0.1 unless a test needs another address, such as
 * the host side of a network namespace: test/helpers/netns.ts).
 */
export async function startNatsCluster(n = 3, o: { host?: string } = {}): Promise<NatsCluster> {
  const host = o.host ?? '127.0.0.1';
  const dir = tempDir('cns-nats-');
  const clientPorts = await freePorts(n);
  const routePorts = await freePorts(n);
  const clusterName = `cns-${process.pid}-${++clusters}`;
  const argsOf = (i: number) => {
    const routes = routePorts.filter((_, j) => j !== i).map((p) => `nats://${host}:${p}`);
    const server = ['-a', host, '-p', String(clientPorts[i]), '-n', `n${i + 1}`, '-js', '-sd', join(dir, `n${i + 1}`)];
    // One server is not a JetStream cluster (2.9 refuses a cluster without routes): it runs alone.
    if (n === 1) return server;
    return [...server, ...['--cluster_name', clusterName, '--cluster', `nats://${host}:${routePorts[i]}`], ...['--routes', routes.join(',')]];
  };
  const servers: (ServerProcess | null)[] = clientPorts.map(() => null);
  const stop = async () => {
    await Promise.all(servers.map((s) => s?.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < n; i++) servers[i] = new ServerProcess(`n${i + 1}`, argsOf(i));
    const deadline = Date.now() + READY_WITHIN_MS;
    await Promise.all(servers.map((s) => s!.waitFor(READY, deadline)));
    // A single server is its own cluster of one: no metadata leader is elected.
    if (n > 1) await Promise.race(servers.map((s) => s!.waitFor(META_LEADER, deadline)));
  } catch (err) {
    await stop();
    throw err;
  }
  const at = (i: number) => {
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new Error(`nats cluster: no server ${i} (0..${n - 1})`);
    return i;
  };
  return {
    urls: clientPorts.map((p) => `nats://${host}:${p}`),
    kill: async (i) => {
      await servers[at(i)]?.kill();
      servers[i] = null;
    },
    restart: async (i) => {
      if (servers[at(i)]) throw new Error(`nats cluster: server ${i} is still running`);
      const server = new ServerProcess(`n${i + 1}`, argsOf(i));
      servers[i] = server;
      await server.waitFor(READY, Date.now() + READY_WITHIN_MS);
    },
    stop,
  };
}

/** One `nats-server` without JetStream. */
export async function startPlainNatsServer(): Promise<PlainNatsServer> {
  const [port] = await freePorts(1);
  const server = new ServerProcess('plain', ['-a', '127.0.0.1', '-p', String(port)]);
  try {
    await server.waitFor(READY, Date.now() + READY_WITHIN_MS);
  } catch (err) {
    await server.kill();
    throw err;
  }
  return { url: `nats://127.0.0.1:${port}`, stop: () => server.kill() };
}

/** Ports free now, by listening on port 0 and closing; held together so that none is picked twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const s = createServer();
      return new Promise<typeof s>((resolve, reject) => {
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => resolve(s));
      });
    }),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/** One running `nats-server`, its log kept in memory so that readiness can be waited for. */
class ServerProcess {
  private readonly child: ChildProcess;
  private log = '';
  private readonly exited: Promise<void>;
  private readonly logWaiters = new Set<() => void>();

  constructor(
    private readonly name: string,
    args: string[],
  ) {
    this.child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(this.child);
    hookExit();
    this.exited = new Promise((resolve) => {
      const gone = () => {
        running.delete(this.child);
        this.wake();
        resolve();
      };
      this.child.once('exit', gone);
      // A process that could not be spawned never exits: it is gone already.
      this.child.once('error', (err) => {
        this.log += `\nspawn failed: ${err.message}`;
        gone();
      });
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      // The start-up lines are what readiness needs; past that, only the tail is kept for messages.
      this.log = (this.log + chunk).slice(-64_000);
      this.wake();
    });
  }

  /** Resolves when `line` has appeared in the log; rejects with the log's tail if the process exits first or `deadline` passes. */
  async waitFor(line: string, deadline: number): Promise<void> {
    for (;;) {
      if (this.log.includes(line)) return;
      const failure = !running.has(this.child) ? 'exited' : Date.now() >= deadline ? 'timed out' : null;
      if (failure) throw new Error(`nats-server ${this.name} ${failure} before "${line}":\n${this.log.slice(-2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, Math.max(0, deadline - Date.now()));
        function wake() {
          clearTimeout(timer);
          resolve();
        }
        this.logWaiters.add(wake);
      });
    }
  }

  async kill(): Promise<void> {
    if (running.has(this.child)) this.child.kill('SIGKILL');
    await this.exited;
  }

  private wake(): void {
    const waiters = [...this.logWaiters];
    this.logWaiters.clear();
    for (const w of waiters) w();
  }
}

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}
