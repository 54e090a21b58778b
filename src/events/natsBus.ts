import { randomUUID } from 'node:crypto';
import { jetstream, JetStreamApiError, type JetStreamClient, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../logging/logger.ts';
import type { BusMessage, BusTransport } from './changeBus.ts';
import { BusOpenError, connectBefore, oneLine, seconds } from './nats/connect.ts';
import { decodeEnvelope, encodeEnvelope } from './nats/envelope.ts';
import { OrderedFeed } from './nats/orderedFeed.ts';
import { PublishQueue, type QueuedPublish } from './nats/publishQueue.ts';
import { clusterSizeOf, DEFAULT_STREAM, ensureBusStream, StreamConflictError } from './nats/stream.ts';
import { commitMessageId, subjectOf } from './nats/subjects.ts';

export interface NatsBusOptions {
  /** NATS client URLs (CNS_BUS_URL), all of one cluster. */
  servers: string[];
  /** This process's name (node and worker): what it publishes carries it, and it skips its own. */
  origin: string;
  /** The stream's name; tests give their own. */
  stream?: string;
  logger?: Logger;
  /** Messages kept while NATS is away; past it the oldest are dropped. */
  maxBacklog?: number;
  /** How long opening may take (connecting, checking JetStream, the stream). */
  connectTimeoutMs?: number;
  /** The consumer was recreated or missed messages (a failover, a reconnect): drop what caches hold. */
  onReset?: () => void;
}

export interface NatsBusState {
  connected: boolean;
  /** Messages sent here and not yet acknowledged by JetStream. */
  backlog: number;
  /** Messages dropped since open (the backlog was full, or close came first). */
  dropped: number;
  /** The servers given. */
  servers: string[];
  /** The server connected to now (`host:port`), or null. */
  server: string | null;
}

const DEFAULT_MAX_BACKLOG = 10_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long a publish waits for its ack before it is retried (with the same id, so never stored twice). */
const ACK_TIMEOUT_MS = 3_000;
/** JetStream API calls once open. */
const API_TIMEOUT_MS = 5_000;
const CLOSE_FLUSH_MS = 2_000;
const JS_TEMPORARILY_UNAVAILABLE = 10008;

/**
 * The change bus between nodes, on a NATS JetStream stream (docs/design/cluster.md §7). `send`
 * queues and returns at once; one loop publishes in order, each after the previous one's ack.
 * `start` reads, through an ordered consumer, what the other processes publish from then on.
 */
export async function openNatsBus(options: NatsBusOptions): Promise<NatsBusTransport> {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (options.servers.length === 0) throw new BusOpenError('no NATS server given');
  const deadline = Date.now() + timeoutMs;
  const nc = await connectBefore(options.servers, `cns-bus ${options.origin}`, deadline, timeoutMs);
  try {
    const stream = options.stream ?? DEFAULT_STREAM;
    await ensureJetStreamBefore(nc, stream, deadline, timeoutMs);
    return new NatsBusTransport(nc, jetstream(nc, { timeout: API_TIMEOUT_MS }), stream, options);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

/** JetStream answers and the stream is in place, or a one-line BusOpenError. Retried until the deadline: a cluster may still be electing its leader. */
async function ensureJetStreamBefore(nc: NatsConnection, stream: string, deadline: number, timeoutMs: number): Promise<void> {
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: Math.max(100, deadline - Date.now()) });
      await ensureBusStream(jsm, stream, clusterSizeOf(nc.info));
      return;
    } catch (err) {
      // nats.js's JetStreamNotEnabled (no responder to the JetStream API) is exported only from its internal module.
      if (err instanceof Error && err.name === 'JetStreamNotEnabled') throw new BusOpenError('the NATS server has no JetStream (start it with -js)', { cause: err });
      // An answer other than "temporarily unavailable" (a cluster electing its leader) will not change by asking again.
      if (err instanceof StreamConflictError || (err instanceof JetStreamApiError && err.code !== JS_TEMPORARILY_UNAVAILABLE)) throw new BusOpenError(`JetStream refused the stream ${stream}: ${oneLine(err)}`, { cause: err });
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(0, deadline - Date.now()))));
  }
  const cause = lastError === null ? 'no answer' : oneLine(lastError);
  throw new BusOpenError(`JetStream did not set up the stream ${stream} within ${seconds(timeoutMs)} (${cause})`, { cause: lastError });
}

export class NatsBusTransport implements BusTransport {
  private readonly queue: PublishQueue;
  private readonly logger: Logger | undefined;
  private connected = true;
  private feed: OrderedFeed | null = null;
  private starting = false;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly options: NatsBusOptions,
  ) {
    this.logger = options.logger;
    this.queue = new PublishQueue({ publish: (item) => this.publish(item), maxBacklog: options.maxBacklog ?? DEFAULT_MAX_BACKLOG, logger: this.logger });
    this.queue.setOnline(true);
    void this.followStatus();
  }

  send(message: BusMessage): void {
    const msgID = 'commit' in message ? commitMessageId(message.commit) : randomUUID();
    this.queue.push({ subject: subjectOf(message), data: encodeEnvelope(this.options.origin, message), msgID });
  }

  async start(receive: (message: BusMessage) => void): Promise<void> {
    if (this.starting || this.closing) throw new Error('nats bus: start was called twice, or after close');
    this.starting = true;
    const feedOptions = {
      onMessage: (msg: JsMsg) => {
        const envelope = decodeEnvelope(msg.data);
        if ('invalid' in envelope) {
          this.logger?.warn({ subject: msg.subject, seq: msg.info.streamSequence, reason: envelope.invalid }, 'nats bus: a malformed message was skipped');
          return;
        }
        if (envelope.origin !== this.options.origin) receive(envelope.message);
      },
      onReset: () => this.options.onReset?.(),
      logger: this.logger,
    };
    // Retried as opening is: the cluster may be electing a leader (a server just restarted).
    const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const feed = await OrderedFeed.open(this.js, this.stream, feedOptions);
        if (this.closing) await feed.stop();
        else this.feed = feed;
        feed.setConnected(this.connected);
        return;
      } catch (err) {
        if (Date.now() >= deadline || this.closing) throw new Error(`nats bus: cannot open the consumer of the stream ${this.stream} within ${seconds(timeoutMs)} (${oneLine(err)})`, { cause: err });
        this.logger?.warn({ err }, 'nats bus: cannot open the consumer yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  state(): NatsBusState {
    const connected = this.connected && !this.nc.isClosed();
    return { connected, backlog: this.queue.backlog, dropped: this.queue.dropped, servers: [...this.options.servers], server: connected ? this.nc.getServer() : null };
  }

  /** Stops reading, publishes what waits for up to 2 s, then closes the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.feed?.stop();
      await this.queue.close(CLOSE_FLUSH_MS);
      await this.nc.close().catch(() => undefined);
    })();
    return this.closing;
  }

  private async publish(item: QueuedPublish): Promise<void> {
    await this.js.publish(item.subject, item.data, { msgID: item.msgID, timeout: ACK_TIMEOUT_MS });
  }

  /** Publishing pauses while the connection is down: a publish then would only wait in the client's buffer for its ack to time out. */
  private async followStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.queue.setOnline(false);
        this.feed?.setConnected(false);
        this.logger?.warn({ server: status.server }, 'nats bus: disconnected from NATS');
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.queue.setOnline(true);
        this.feed?.setConnected(true);
        this.logger?.info({ server: status.server }, 'nats bus: reconnected to NATS');
      }
    }
  }
}
