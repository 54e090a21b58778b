import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server (PostgreSQL at 127.0.0.1:5432), so a test can make the database
 * go away and come back without touching the machine's server: `down()` stops listening and
 * destroys every connection through it (clients see their sockets close, new ones are refused);
 * `up()` listens again on the same port.
 */
export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** `o.host`: the address it listens on (127.0.0.1 unless the clients are elsewhere: test/helpers/netns.ts). */
export async function tcpProxy(target: { host: string; port: number }, o: { host?: string } = {}): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = async () => {
    const s = createServer((client) => {
      const upstream = createConnection(target);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, o.host ?? '127.0.0.1', () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const down = async () => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    down,
    up: listen,
    close: down,
  };
}
