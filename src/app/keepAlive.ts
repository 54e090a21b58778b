import type { Server } from 'node:http';

/**
 * How long an idle keep-alive connection stays open. Longer than the idle timeouts of common
 * clients and proxies (undici keeps a connection 2 s less than the server's `Keep-Alive` hint,
 * browsers and nginx ~60 s), so that the client, not the server, closes an idle connection: a
 * server closing one just as a client reuses it resets that client's request (seen as ECONNRESET
 * under load with Node's default of 5 s). Idle connections cost a file descriptor and no thread.
 */
export const KEEP_ALIVE_MS = 65_000;

/** Applies the keep-alive timeout. */
export function keepAlive(server: Server): Server {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}
