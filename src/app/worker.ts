import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { loadSettings, poolPerProcess } from '../config/settings.ts';
import { createLogger } from '../logging/logger.ts';
import { bootstrap } from './bootstrap.ts';
import { createApp } from './createApp.ts';
import { closeServices, joinCluster, openServices, startWebhooks } from './services.ts';
import { useHookAddress } from '../remote/hookUrl.ts';
import { IpcBusTransport } from '../cluster/ipcBus.ts';
import { RateShare } from '../cluster/rateShare.ts';
import type { FirstStart, ToPrimary, ToWorker } from '../cluster/messages.ts';
import { ownerRouting } from '../http/workers/ownerRouting.ts';
import { WorkerOwnership } from '../cluster/workerOwnership.ts';
import { keepAlive } from './keepAlive.ts';

const SHUTDOWN_GRACE_MS = 10_000;

/** The first of these messages from the primary. */
function waitFor(...kinds: ToWorker['t'][]): Promise<ToWorker['t']> {
  return new Promise((resolve) => {
    const on = (m: ToWorker) => {
      if (!kinds.includes(m.t)) return;
      process.off('message', on);
      resolve(m.t);
    };
    process.on('message', on);
  });
}

/**
 * One worker of `cns serve --workers N` (started by primary.ts with its identity in the
 * environment): the whole service over the shared data folder, serving the connections the
 * primary hands it, plus a private loopback listener for requests other workers forward to it
 * (changes of the projects it owns) and for its git pushes' hook callbacks.
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const send = (m: ToPrimary) => process.send?.(m);
  const name = env.CNS_WORKER_NAME!;
  // Started beside the first worker (its modules load meanwhile): the data folder is ready on 'go'.
  // Stopped or orphaned meanwhile, it has nothing to finish.
  if (env.CNS_WAIT_BOX === '1') {
    const orphaned = () => process.exit(0);
    process.once('disconnect', orphaned);
    if ((await waitFor('go', 'stop')) === 'stop') process.exit(0);
    process.off('disconnect', orphaned);
  }
  const settings = loadSettings(env);
  const logger = createLogger(settings.logLevel).child({ worker: name });
  const publicPort = Number(env.CNS_PUBLIC_PORT);
  if (settings.port === 0 && publicPort > 0 && settings.baseUrl.endsWith(':0')) settings.baseUrl = settings.baseUrl.slice(0, -1) + String(publicPort);

  let ownership!: WorkerOwnership;
  // Each worker has a pool of its own: its share of CNS_DATABASE_POOL.
  const services = await openServices(
    settings,
    logger,
    (db) => {
      ownership = new WorkerOwnership(db, { name, holder: env.CNS_WORKER_HOLDER!, boxStart: env.CNS_BOX_START === '1' }, (project) => send({ t: 'held', project }));
      return ownership;
    },
    poolPerProcess(settings),
  );
  services.cluster = ownerRouting({ ownership, secret: env.CNS_BOX_SECRET!, bodyLimitBytes: settings.bodyLimitBytes });
  const rates = new RateShare({ api: services.rateLimiter, login: services.loginRateLimiter, loginAddress: services.loginAddressRateLimiter }, (takes) => send({ t: 'rate', takes }));
  const transport = new IpcBusTransport(send);
  await services.bus.connect(transport);

  // A cluster node joins once, here when this worker has the box's duties; losing its id stops every worker.
  await joinCluster(services, (reason) => send({ t: 'fatal', message: reason }));
  let firstStart: FirstStart | null = null;
  if (ownership.boxStart) {
    firstStart = (await bootstrap(services)).createdAdmin;
    // No other worker runs yet: commits a crash left unindexed are indexed before anyone serves,
    // under the projects' leases (the writers' fence), which go back to nobody afterwards.
    await ownership.recover(services.content.listProjects(), () => services.content.reconcileAll());
  }
  // At the box's start only (recover): turns a previous run left running are marked interrupted.
  await services.agents.start();
  await services.sandbox.start();
  await services.syncRuntime.start();
  startWebhooks(services);

  const handle = createApp(services).callback() as (req: IncomingMessage, res: ServerResponse) => void;
  const server = createServer(handle);
  keepAlive(server);
  const inner = createServer(handle);
  keepAlive(inner);
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve));
  const port = (inner.address() as AddressInfo).port;
  useHookAddress(`http://127.0.0.1:${port}`);

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      services.feed.close();
      services.mcp.close();
      await Promise.all(
        [server, inner].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeIdleConnections();
              setTimeout(() => s.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
            }),
        ),
      );
      rates.close();
      await closeServices(services);
      // After the last write: the next owner takes the leases without waiting for this one to be declared gone.
      try {
        ownership.release();
      } catch {
        // the database is closed already: the primary declares this worker gone instead
      }
    })());

  const heads: Buffer[] = [];
  process.on('message', (m: ToWorker, socket?: Socket) => {
    switch (m.t) {
      case 'head':
        heads.push(Buffer.from(m.head, 'latin1'));
        return;
      case 'conn': {
        const head = heads.shift();
        if (!socket) return;
        server.emit('connection', socket);
        // Straight to the HTTP parser's listener: the parser reads the socket's handle directly
        // from now on, so bytes put back into the stream's buffer (unshift) would be missed when
        // more follow them (a large body).
        if (head) socket.emit('data', head);
        socket.resume();
        send({ t: 'took' });
        return;
      }
      case 'members':
        ownership.setMembers(m.members);
        return;
      case 'bus':
        transport.deliver(m.msg);
        return;
      case 'rate':
        rates.receive(m.takes);
        return;
      case 'ping':
        send({ t: 'pong' });
        return;
      case 'stop':
        void stop().then(
          () => process.exit(0),
          (err) => {
            logger.error({ err }, 'worker stop failed');
            process.exit(1);
          },
        );
    }
  });
  // The primary is gone: the service was killed, and this worker goes with it, at once, as one
  // process would (nothing routes here any more; what it was writing is recovered at the next
  // start, like after any crash).
  process.on('disconnect', () => process.exit(1));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {}); // the primary decides when to stop

  send({ t: 'ready', port, firstStart, baseUrl: services.settings.baseUrl });
}
