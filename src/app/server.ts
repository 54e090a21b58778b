import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Settings } from '../config/settings.ts';
import { createLogger, type Logger } from '../logging/logger.ts';
import { bootstrap, type BootstrapResult } from './bootstrap.ts';
import { createApp } from './createApp.ts';
import { closeServices, joinCluster, openServices, startWebhooks, type Services } from './services.ts';
import { ListenError } from './listenError.ts';
import { keepAlive } from './keepAlive.ts';

export { ListenError };

const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  /** An address that reaches the server from this machine (loopback when bound to every interface). */
  url: string;
  /** What the server listens on, as bound (`http://0.0.0.0:8080` means every IPv4 interface). */
  listenUrl: string;
  port: number;
  services: Services;
  bootstrap: BootstrapResult;
  /** Stops accepting, lets requests in flight finish, then closes the database. */
  close(): Promise<void>;
  /** Resolves with the reason when the service stops by itself: a cluster node whose id another run took (it is closing then). */
  stoppedItself: Promise<string>;
}

/** Builds the services, runs first-start bootstrap and listens. Used by `cns serve` and by the tests. */
export async function startServer(settings: Settings, logger: Logger = createLogger(settings.logLevel)): Promise<RunningServer> {
  // The port is taken first, before the services open (and on a first start create) the data
  // folder: a start that cannot listen changes nothing, creates no file and no administrator
  // whose password nobody sees. Requests that arrive while the start finishes wait for the app
  // (their bodies stay unread).
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const early: [IncomingMessage, ServerResponse][] = [];
  const server: Server = createServer((req, res) => (handle ? handle(req, res) : early.push([req, res])));
  keepAlive(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port, settings.host, () => resolve());
    });
  } catch (err) {
    throw new ListenError(settings.host, settings.port, err as NodeJS.ErrnoException);
  }
  const stopListening = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  let services: Services;
  try {
    // One process: the whole of CNS_DATABASE_POOL is its own.
    services = await openServices(settings, logger);
  } catch (err) {
    await stopListening();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  // With PORT=0 the address is only known now; links must name the real port.
  if (settings.port === 0 && services.settings.baseUrl.endsWith(':0')) {
    services.settings.baseUrl = services.settings.baseUrl.slice(0, -1) + String(port);
  }
  let boot: BootstrapResult;
  let lost: (reason: string) => void = () => {};
  const stoppedItself = new Promise<string>((resolve) => (lost = resolve));
  try {
    // A cluster node is checked and recorded before anything else runs (a refusal stops the start).
    await joinCluster(services, (reason) => lost(reason));
    boot = await bootstrap(services);
    // Turns a previous run left running are marked interrupted before any new one starts.
    await services.agents.start();
    await services.sandbox.start();
    // Commits that reached a repository without being indexed (a crash after a push) are indexed before serving.
    await services.content.reconcileAll();
    // After reconciling: a scheduled sync run writes through the content store.
    await services.syncRuntime.start();
    // After reconciling too: commits a stop left unqueued are queued, then pending deliveries go out.
    startWebhooks(services);
  } catch (err) {
    await stopListening();
    await closeServices(services);
    throw err;
  }
  handle = createApp(services).callback();
  for (const [req, res] of early.splice(0)) handle(req, res);

  const everywhere = settings.host === '0.0.0.0' || settings.host === '::';
  const host = everywhere ? '127.0.0.1' : settings.host;
  const bracket = (h: string) => (h.includes(':') ? `[${h}]` : h);

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Event streams end now, cleanly, instead of being cut when the grace period runs out.
      services.feed.close();
      services.mcp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Long-lived streams (event feeds) would hold shutdown forever: cut them after a grace period.
        setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      });
      await closeServices(services);
    })());

  // Another run of this node took its id: this one serves nothing more.
  void stoppedItself.then(() => close().catch((err: unknown) => logger.error({ err }, 'the stop failed')));
  return { url: `http://${bracket(host)}:${port}`, listenUrl: `http://${bracket(settings.host)}:${port}`, port, services, bootstrap: boot, close, stoppedItself };
}
