import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../logging/logger.ts';

export interface OrderedFeedOptions {
  /** Each message in stream order; a throw is logged and the message skipped. */
  onMessage: (msg: JsMsg) => void;
  /** The consumer was recreated or a gap was seen: something may have been missed. */
  onReset: () => void;
  logger?: Logger;
}

/** Each pull lasts this long; the server sends an idle heartbeat every half of it. */
const PULL_EXPIRES_MS = 3_000;
const PULL_BATCH = 256;
/** Three heartbeats missed while connected: the consumer is taken for lost. */
const STALL_MS = 3 * (PULL_EXPIRES_MS / 2);
const WATCH_EVERY_MS = 1_000;
const REOPEN_WAIT_MS = 500;

/**
 * An ordered consumer over the whole stream, from its next message on (what `DeliverPolicy.New`
 * means). It is given as a start sequence, not as `New`: nats.js resumes a recreated ordered
 * consumer from the last sequence it delivered, which before the first message is 0, so one
 * recreated before any message arrived would replay the whole stream.
 *
 * nats.js recreates the consumer itself after a gap, or once the server says it is gone. But an
 * ordered consumer is one replica in memory on one server: when that server dies, NATS 2.9
 * answers nothing about it, and nats.js waits forever. So this watches for life (a message or an
 * idle heartbeat) and, after three heartbeats missed while connected, opens a new consumer from
 * the next sequence, as it does if nats.js gives up.
 */
export class OrderedFeed {
  private lastSeq: number;
  private stopped = false;
  private connected = true;
  private lastAlive = Date.now();
  private cancelWait: (() => void) | null = null;
  private readonly watchdog: NodeJS.Timeout;
  private readonly running: Promise<void>;

  private constructor(
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private messages: ConsumerMessages,
    startSeq: number,
    private readonly options: OrderedFeedOptions,
  ) {
    this.lastSeq = startSeq - 1;
    this.watchdog = setInterval(() => this.checkAlive(), WATCH_EVERY_MS);
    this.watchdog.unref();
    this.running = this.run();
  }

  static async open(js: JetStreamClient, stream: string, options: OrderedFeedOptions): Promise<OrderedFeed> {
    const info = await js.jetstreamManager(false).then((jsm) => jsm.streams.info(stream));
    const startSeq = info.state.last_seq + 1;
    return new OrderedFeed(js, stream, await consume(js, stream, startSeq), startSeq, options);
  }

  /** While disconnected no heartbeat can arrive: the watch starts again on reconnection. */
  setConnected(connected: boolean): void {
    this.connected = connected;
    this.lastAlive = Date.now();
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      clearInterval(this.watchdog);
      this.cancelWait?.();
      await this.messages.close();
    }
    await this.running;
  }

  private async run(): Promise<void> {
    for (;;) {
      void this.watch(this.messages);
      await this.deliver(this.messages);
      if (this.stopped) return;
      this.reset();
      for (;;) {
        await this.wait(REOPEN_WAIT_MS);
        if (this.stopped) return;
        try {
          this.messages = await consume(this.js, this.stream, this.lastSeq + 1);
          this.lastAlive = Date.now();
          this.options.logger?.info({ from: this.lastSeq + 1 }, 'nats bus: a new ordered consumer was opened');
          break;
        } catch (err) {
          this.options.logger?.warn({ err }, 'nats bus: cannot open the ordered consumer again; retrying');
        }
      }
      if (this.stopped) {
        await this.messages.close();
        return;
      }
    }
  }

  private async deliver(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const msg of messages) {
        this.lastAlive = Date.now();
        const seq = msg.info.streamSequence;
        if (seq <= this.lastSeq) continue; // delivered already (a consumer opened again may repeat)
        // The stream holds only the bus's subjects and the consumer reads them all, so its sequence has no holes.
        if (seq > this.lastSeq + 1) {
          this.options.logger?.warn({ expected: this.lastSeq + 1, got: seq }, 'nats bus: a gap in the stream');
          this.reset();
        }
        this.lastSeq = seq;
        try {
          this.options.onMessage(msg);
        } catch (err) {
          this.options.logger?.warn({ err, subject: msg.subject, seq }, 'nats bus: a message could not be delivered');
        }
      }
      if (!this.stopped) this.options.logger?.warn('nats bus: the ordered consumer ended; opening another');
    } catch (err) {
      if (!this.stopped) this.options.logger?.warn({ err }, 'nats bus: the ordered consumer failed; opening another');
    }
  }

  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (status.type === 'heartbeat') this.lastAlive = Date.now();
      else if (status.type === 'ordered_consumer_recreated') {
        this.lastAlive = Date.now();
        this.options.logger?.info({ consumer: status.name }, 'nats bus: the ordered consumer was recreated');
        this.reset();
      }
    }
  }

  /** Ends a consumer that has gone silent; `run` opens the next one. */
  private checkAlive(): void {
    if (this.stopped || !this.connected || Date.now() - this.lastAlive < STALL_MS) return;
    this.options.logger?.warn({ silentMs: Date.now() - this.lastAlive }, 'nats bus: the ordered consumer went silent; replacing it');
    this.lastAlive = Date.now();
    void this.messages.close();
  }

  private reset(): void {
    try {
      this.options.onReset();
    } catch (err) {
      this.options.logger?.warn({ err }, 'nats bus: onReset failed');
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.cancelWait = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.cancelWait = done;
    });
  }
}

async function consume(js: JetStreamClient, stream: string, startSeq: number): Promise<ConsumerMessages> {
  const consumer = await js.consumers.get(stream, { opt_start_seq: startSeq });
  return consumer.consume({ max_messages: PULL_BATCH, expires: PULL_EXPIRES_MS });
}
