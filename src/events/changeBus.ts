import type { Logger } from '../logging/logger.ts';
import type { CommitEvent } from './commitEvent.ts';

export type CommitSubscriber = (event: CommitEvent) => void;

/**
 * Something other processes must hear about that is not a commit: a project deleted, reindexed
 * or purged (caches keyed by it are dropped), a publish changed, access taken away (open
 * streams are checked again). Plain data, like a commit event.
 */
export interface BusSignal {
  /** `placement-changed`: a cluster moved the project's primary or copies (every node drops the placement it cached). */
  kind: 'project-deleted' | 'project-reset' | 'publish-changed' | 'access-changed' | 'placement-changed';
  project: string;
}
export type SignalSubscriber = (signal: BusSignal) => void;

/** What crosses a transport: a commit or a signal. */
export type BusMessage = { commit: CommitEvent } | { signal: BusSignal };

/**
 * How events leave this process and arrive from others. The in-process bus needs none; IPC
 * between workers (cluster/ipcBus.ts) and later NATS JetStream between nodes implement it:
 * `send` hands a message published here to the others, and `receive` is called for each one
 * published elsewhere.
 */
export interface BusTransport {
  send(message: BusMessage): void;
  start(receive: (message: BusMessage) => void): void | Promise<void>;
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /**
   * Only commits made by this process: work that belongs to the project's owner (the search
   * indexer, webhooks, blame checkpoints) subscribes so, and runs once however many workers hear
   * the commit. Caches and the live feed hear every commit.
   */
  local?: boolean;
}

/**
 * The change bus: the content core's owner publishes each acknowledged commit; subscribers
 * (the live feed, the search indexer, warm sandboxes, the publish cache, webhooks) register here
 * by name. Delivery to this process's subscribers is synchronous and in publish order; a
 * subscriber that throws is logged and never fails the write that published.
 */
export class ChangeBus {
  private readonly subscribers = new Map<string, { fn: CommitSubscriber; local: boolean }>();
  private readonly signalSubscribers = new Map<string, SignalSubscriber>();
  private transport: BusTransport | null = null;

  constructor(private readonly logger?: Logger) {}

  /** Carries events to and from other processes (workers, nodes) from now on. */
  async connect(transport: BusTransport): Promise<void> {
    this.transport = transport;
    await transport.start((message) => ('commit' in message ? this.deliver(message.commit, false) : this.deliverSignal(message.signal)));
  }

  /** An acknowledged commit of a project owned here: delivered here, then sent to the others. */
  publish(event: CommitEvent): void {
    this.deliver(event, true);
    this.transport?.send({ commit: event });
  }

  /** A commit a cluster replica indexed from its primary: for this process's subscribers only (the primary announced it to the others). */
  publishHere(event: CommitEvent): void {
    this.deliver(event, true);
  }

  /** A signal for every process, this one included. */
  signal(signal: BusSignal): void {
    this.deliverSignal(signal);
    this.transport?.send({ signal });
  }

  /** Registers `subscriber` under a unique name; returns the function that removes it. */
  subscribe(name: string, subscriber: CommitSubscriber, options: SubscribeOptions = {}): () => void {
    if (this.subscribers.has(name)) throw new Error(`change bus: "${name}" is already subscribed`);
    const entry = { fn: subscriber, local: options.local === true };
    this.subscribers.set(name, entry);
    return () => {
      if (this.subscribers.get(name) === entry) this.subscribers.delete(name);
    };
  }

  /** Registers a signal subscriber under a unique name; returns the function that removes it. */
  onSignal(name: string, subscriber: SignalSubscriber): () => void {
    if (this.signalSubscribers.has(name)) throw new Error(`change bus: signal "${name}" is already subscribed`);
    this.signalSubscribers.set(name, subscriber);
    return () => {
      if (this.signalSubscribers.get(name) === subscriber) this.signalSubscribers.delete(name);
    };
  }

  /** The names subscribed (health and tests). */
  names(): string[] {
    return [...this.subscribers.keys()];
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    this.signalSubscribers.clear();
    await this.transport?.close();
    this.transport = null;
  }

  private deliver(event: CommitEvent, here: boolean): void {
    for (const [name, { fn, local }] of this.subscribers) {
      if (local && !here) continue;
      try {
        fn(event);
      } catch (err) {
        this.logger?.warn({ err, subscriber: name, project: event.project }, 'a change bus subscriber failed');
      }
    }
  }

  private deliverSignal(signal: BusSignal): void {
    for (const [name, fn] of this.signalSubscribers) {
      try {
        fn(signal);
      } catch (err) {
        this.logger?.warn({ err, subscriber: name, project: signal.project }, 'a change bus signal subscriber failed');
      }
    }
  }
}
