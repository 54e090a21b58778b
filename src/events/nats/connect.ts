import { connect, type NatsConnection } from '@nats-io/transport-node';

/**
 * Opening the bus's connection. Once open, the client reconnects forever, trying every server it
 * knows (those given and those the cluster advertises), so a node rides out a NATS server's loss
 * or restart. Opening itself is bounded: the servers may still be starting, so it retries until
 * the deadline, then fails with one line that names the setting (what an operator fixes).
 */
const RECONNECT_WAIT_MS = 500;
const RECONNECT_JITTER_MS = 250;
/** A peer that stops answering (no TCP reset, e.g. a partition) is noticed within about 15 s. */
const PING_INTERVAL_MS = 5_000;
const MAX_PINGS_OUT = 3;
const RETRY_OPEN_MS = 200;

export class BusOpenError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(`CNS_BUS_URL: ${message}`, options);
    this.name = 'BusOpenError';
  }
}

/** Seconds for a message: "5 s", "1.5 s". */
export const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** The first line of an error's message, for errors that must stay one line. */
export const oneLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n', 1)[0]!.trim();

export async function connectBefore(servers: string[], name: string, deadline: number, timeoutMs: number): Promise<NatsConnection> {
  let lastError: unknown = null;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      return await connect({
        servers,
        name,
        timeout: left,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: RECONNECT_WAIT_MS,
        reconnectJitter: RECONNECT_JITTER_MS,
        pingInterval: PING_INTERVAL_MS,
        maxPingOut: MAX_PINGS_OUT,
      });
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_OPEN_MS, Math.max(0, deadline - Date.now()))));
  }
  const cause = lastError === null ? '' : ` (${oneLine(lastError)})`;
  throw new BusOpenError(`cannot reach NATS at ${servers.join(', ')} within ${seconds(timeoutMs)}${cause}`, { cause: lastError });
}
