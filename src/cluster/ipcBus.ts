import type { BusMessage, BusTransport } from '../events/changeBus.ts';
import type { ToPrimary } from './messages.ts';

/**
 * The change bus between the workers of one box: a worker sends what it publishes to the
 * primary, which relays it to every other worker (primary.ts); messages arriving from the
 * primary are handed to `deliver` by the worker's message loop (worker.ts).
 */
export class IpcBusTransport implements BusTransport {
  private receive: ((message: BusMessage) => void) | null = null;

  constructor(private readonly toPrimary: (message: ToPrimary) => void) {}

  start(receive: (message: BusMessage) => void): void {
    this.receive = receive;
  }

  send(message: BusMessage): void {
    this.toPrimary({ t: 'bus', msg: message });
  }

  /** A message another worker published. */
  deliver(message: BusMessage): void {
    this.receive?.(message);
  }

  async close(): Promise<void> {
    this.receive = null;
  }
}
