import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Settings } from '../config/settings.ts';
import { createLogger, type Logger } from '../logging/logger.ts';
import { bootstrap, type BootstrapResult } from './bootstrap.ts';
import { createApp } from './createApp.ts';
import { closeServices, createServices, type Services } from './services.ts';

const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  bootstrap: BootstrapResult;
  /** Stops accepting, lets requests in flight finish, then closes the database. */
  close(): Promise<void>;
}

/** Builds the services, runs first-start bootstrap and listens. Used by `cns serve` and by the tests. */
export async function startServer(settings: Settings, logger: Logger = createLogger(settings.logLevel)): Promise<RunningServer> {
  const services = createServices(settings, logger);
  const boot = await bootstrap(services);
  // Commits that reached a repository without being indexed (a crash after a push) are indexed before serving.
  await services.content.syncAllProjects();
  const app = createApp(services);
  const server: Server = createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  // With PORT=0 the address is only known now; links must name the real port.
  if (settings.port === 0 && services.settings.baseUrl.endsWith(':0')) {
    services.settings.baseUrl = services.settings.baseUrl.slice(0, -1) + String(port);
  }
  const host = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Event streams end now, cleanly, instead of being cut when the grace period runs out.
      services.feed.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Long-lived streams (event feeds) would hold shutdown forever: cut them after a grace period.
        setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      });
      await closeServices(services);
    })());

  return { url: `http://${host}:${port}`, port, services, bootstrap: boot, close };
}
