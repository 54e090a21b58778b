import { Socket, connect, isIP, type LookupFunction } from 'node:net';
import { OutboundRefused, databaseAddressRefusal, guardedLookup, isRefusal } from '../../net/outboundGuard.ts';

/*
 * Database sockets through the outbound guard (src/net/outboundGuard.ts, database rule): a host
 * name is resolved by a lookup that refuses loopback (unless CNS_DB_ALLOW_LOOPBACK),
 * link-local and metadata addresses, and the socket connects to the very address that was
 * checked, so a name cannot pass a check and then resolve elsewhere (DNS rebinding). An IP
 * literal never goes through a lookup, so it is checked here.
 */

/** Why a database connection may not reach `address`, naming the setting that would allow a loopback one; null when it may. */
function refusal(address: string, allowLoopback: boolean): string | null {
  const why = databaseAddressRefusal(address, allowLoopback);
  return why === 'a loopback address' ? `${why}, allowed only when the operator sets CNS_DB_ALLOW_LOOPBACK=true` : why;
}

/** The refusal of an IP literal host, or null (names are checked when they resolve). */
function literalRefusal(host: string, allowLoopback: boolean): OutboundRefused | null {
  if (isIP(host) === 0) return null;
  const why = refusal(host, allowLoopback);
  return why ? new OutboundRefused(`${host} is ${why}`) : null;
}

const databaseLookup = (allowLoopback: boolean): LookupFunction => guardedLookup((address) => refusal(address, allowLoopback));

/** A connected-later socket whose connect fails at once with `refusal`. */
function refusedSocket(refusal: Error): Socket {
  const socket = new Socket();
  socket.connect = (() => {
    process.nextTick(() => socket.destroy(refusal));
    return socket;
  }) as Socket['connect'];
  return socket;
}

/** For pg's `stream` option: pg calls `connect(port, host)` on it; the guard's lookup resolves the host. */
export function pgGuardedSocket(allowLoopback: boolean): () => Socket {
  return () => {
    const socket = new Socket();
    const plainConnect = socket.connect.bind(socket) as (o: { port: number; host: string; lookup: LookupFunction }) => Socket;
    socket.connect = ((port: number, host: string) => {
      const refused = literalRefusal(host, allowLoopback);
      if (refused) {
        process.nextTick(() => socket.destroy(refused));
        return socket;
      }
      return plainConnect({ port, host, lookup: databaseLookup(allowLoopback) });
    }) as Socket['connect'];
    return socket;
  };
}

/** For mysql2's `stream` option: a socket to host:port through the guard. */
export function mysqlGuardedSocket(host: string, port: number, allowLoopback: boolean): () => Socket {
  return () => {
    const refused = literalRefusal(host, allowLoopback);
    if (refused) return refusedSocket(refused);
    const socket = connect({ host, port, lookup: databaseLookup(allowLoopback) });
    socket.setNoDelay(true);
    return socket;
  };
}

/**
 * Checks a host before a connection is saved: an IP literal by its class, a name by every
 * address it resolves to now (sessions check again when they connect). Rejects with
 * OutboundRefused when refused; a name that does not resolve is left to the connection test.
 */
export async function checkDatabaseHost(host: string, allowLoopback: boolean): Promise<void> {
  const refused = literalRefusal(host, allowLoopback);
  if (refused) throw refused;
  if (isIP(host)) return;
  await new Promise<void>((resolve, reject) => {
    databaseLookup(allowLoopback)(host, { all: true }, (err) => (err && isRefusal(err) ? reject(err) : resolve()));
  });
}
