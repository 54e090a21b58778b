import { createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP server that speaks just enough of PostgreSQL's protocol to fail a connection the way
 * this machine's trusting server never does: answer the start-up message with one error
 * (28P01, a wrong password), or say nothing at all (a connect timeout).
 */
export async function fakePostgres(answer: { error: { code: string; message: string } } | 'silent'): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (answer === 'silent') return;
    socket.once('data', () => socket.end(errorResponse(answer.error.code, answer.error.message)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** An ErrorResponse message: 'E', its length, then (field type, text NUL) pairs and a final NUL. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([...[['S', 'FATAL'], ['V', 'FATAL'], ['C', code], ['M', message]].map(([k, v]) => Buffer.from(`${k}${v}\0`)), Buffer.from('\0')]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/** A local port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
