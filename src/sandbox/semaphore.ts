import { DomainError } from '../errors/domainError.ts';

/**
 * At most `limit` holders at once, the rest wait in order; past `maxWaiting` waiters a new one is
 * refused (RATE_LIMITED) rather than queued without bound.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new DomainError('RATE_LIMITED', 'Too many commands are running or waiting; try again shortly.');
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next();
      else this.active--;
    };
  }
}
