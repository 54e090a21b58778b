import type { Logger } from '../logging/logger.ts';
import type { CommitEvent } from './commitEvent.ts';

export type CommitSubscriber = (event: CommitEvent) => void;

/**
 * How events leave this process and arrive from others. The in-process bus needs none; cluster
 * IPC between workers and NATS JetStream between nodes implement it: `send` hands an event
 * published here to the others, and `receive` is called for each event published elsewhere.
 */
export interface BusTransport {
  send(event: CommitEvent): void;
  start(receive: (event: CommitEvent) => void): void | Promise<void>;
  close(): Promise<void>;
}

/**
 * The change bus: the content core's owner publishes each acknowledged commit; subscribers
 * (the live feed, the search indexer, warm sandboxes, the publish cache, and later webhooks)
 * register here by name. Delivery to this process's subscribers is synchronous and in publish
 * order; a subscriber that throws is logged and never fails the write that published.
 */
export class ChangeBus {
  private readonly subscribers = new Map<string, CommitSubscriber>();
  private transport: BusTransport | null = null;

  constructor(private readonly logger?: Logger) {}

  /** Carries events to and from other processes (workers, nodes) from now on. */
  async connect(transport: BusTransport): Promise<void> {
    this.transport = transport;
    await transport.start((event) => this.deliver(event));
  }

  /** An acknowledged commit of a project owned here: delivered here, then sent to the others. */
  publish(event: CommitEvent): void {
    this.deliver(event);
    this.transport?.send(event);
  }

  /** Registers `subscriber` under a unique name; returns the function that removes it. */
  subscribe(name: string, subscriber: CommitSubscriber): () => void {
    if (this.subscribers.has(name)) throw new Error(`change bus: "${name}" is already subscribed`);
    this.subscribers.set(name, subscriber);
    return () => {
      if (this.subscribers.get(name) === subscriber) this.subscribers.delete(name);
    };
  }

  /** The names subscribed (health and tests). */
  names(): string[] {
    return [...this.subscribers.keys()];
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    await this.transport?.close();
    this.transport = null;
  }

  private deliver(event: CommitEvent): void {
    for (const [name, subscriber] of this.subscribers) {
      try {
        subscriber(event);
      } catch (err) {
        this.logger?.warn({ err, subscriber: name, project: event.project }, 'a change bus subscriber failed');
      }
    }
  }
}
