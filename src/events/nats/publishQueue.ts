import type { Logger } from '../../logging/logger.ts';

/** One message waiting to be published: its id is fixed when queued, so a retry is deduplicated by JetStream. */
export interface QueuedPublish {
  subject: string;
  data: Uint8Array;
  msgID: string;
}

export interface PublishQueueOptions {
  /** Publishes one message and resolves on its ack; rejects if it may not have been stored. */
  publish: (item: QueuedPublish) => Promise<void>;
  /** At most this many wait; past it the oldest are dropped. */
  maxBacklog: number;
  logger?: Logger;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/**
 * Publishes messages one at a time in the order queued, each only after the previous one's ack:
 * a failed publish is retried (with backoff) before anything queued behind it, so nothing is
 * reordered. While offline nothing is attempted and messages wait, up to `maxBacklog`; past it the
 * oldest are dropped, with one warning per episode (until the queue empties again).
 */
export class PublishQueue {
  private readonly waiting: QueuedPublish[] = [];
  private inFlight = false;
  private online = false;
  private stopped = false;
  private droppedTotal = 0;
  private droppedInEpisode = 0;
  private failures = 0;
  private retrying = false;
  private wakeLoop: (() => void) | null = null;
  private readonly idleWaiters = new Set<() => void>();
  private readonly loop: Promise<void>;

  constructor(private readonly options: PublishQueueOptions) {
    if (!Number.isSafeInteger(options.maxBacklog) || options.maxBacklog < 1) throw new Error(`nats bus: maxBacklog must be a positive integer, not ${options.maxBacklog}`);
    this.loop = this.run();
  }

  /** Messages not yet acknowledged (the one being published included). */
  get backlog(): number {
    return this.waiting.length + (this.inFlight ? 1 : 0);
  }

  get dropped(): number {
    return this.droppedTotal;
  }

  push(item: QueuedPublish): void {
    if (this.stopped) {
      this.options.logger?.warn({ subject: item.subject }, 'nats bus: a message sent after close was dropped');
      return;
    }
    this.waiting.push(item);
    this.trim();
    // A retry's backoff is not cut short by new messages, only its wait for them.
    if (!this.retrying) this.wake();
  }

  /** Whether the connection is up: while it is down nothing is attempted (the client would only buffer it). */
  setOnline(online: boolean): void {
    this.online = online;
    if (online) {
      this.failures = 0;
      this.wake();
    }
  }

  /** Publishes what waits for at most `withinMs`, then stops; what is left is dropped and counted. */
  async close(withinMs: number): Promise<void> {
    if (!this.stopped) {
      await this.idle(withinMs);
      this.stopped = true;
      const left = this.waiting.length;
      this.waiting.length = 0;
      if (left > 0) {
        this.droppedTotal += left;
        this.options.logger?.warn({ left }, 'nats bus: closed with messages unpublished');
      }
      this.wake();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const item = this.online ? this.waiting.shift() : undefined;
      if (!item) {
        this.notifyIdle();
        await this.pause(null);
        continue;
      }
      this.inFlight = true;
      try {
        await this.options.publish(item);
        this.failures = 0;
      } catch (err) {
        // Back at the head, so that it goes before everything queued behind it (or is the first dropped).
        this.waiting.unshift(item);
        this.trim();
        this.failures++;
        if (this.failures === 1) this.options.logger?.warn({ err, subject: item.subject }, 'nats bus: a publish failed; retrying');
        this.inFlight = false;
        this.retrying = true;
        await this.pause(Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1)));
        this.retrying = false;
      } finally {
        this.inFlight = false;
      }
      if (this.waiting.length === 0) this.endDropEpisode();
    }
    this.notifyIdle();
  }

  private trim(): void {
    const excess = this.waiting.length - this.options.maxBacklog;
    if (excess <= 0) return;
    this.waiting.splice(0, excess);
    if (this.droppedInEpisode === 0) {
      this.options.logger?.warn({ maxBacklog: this.options.maxBacklog }, 'nats bus: the backlog is full; dropping the oldest messages until it drains');
    }
    this.droppedInEpisode += excess;
    this.droppedTotal += excess;
  }

  private endDropEpisode(): void {
    if (this.droppedInEpisode === 0) return;
    this.options.logger?.warn({ dropped: this.droppedInEpisode }, 'nats bus: the backlog drained; messages were dropped meanwhile');
    this.droppedInEpisode = 0;
  }

  /** Waits until woken (a push unless retrying, going online, close) or, if `ms` is given, that long. */
  private pause(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === null ? null : setTimeout(done, ms);
      const self = this;
      function done() {
        if (timer) clearTimeout(timer);
        if (self.wakeLoop === done) self.wakeLoop = null;
        resolve();
      }
      this.wakeLoop = done;
    });
  }

  private wake(): void {
    this.wakeLoop?.();
  }

  /** Resolves once nothing waits or is in flight, or after `withinMs`. */
  private idle(withinMs: number): Promise<void> {
    if (this.backlog === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, withinMs);
      const waiters = this.idleWaiters;
      function done() {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      }
      waiters.add(done);
    });
  }

  private notifyIdle(): void {
    if (this.backlog > 0) return;
    for (const w of [...this.idleWaiters]) w();
  }
}
