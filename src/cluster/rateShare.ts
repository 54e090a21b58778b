/** What a rate limiter offers for sharing its takes between workers. */
export interface SharedLimiter {
  onTake: ((key: string) => void) | null;
  debit(key: string, count: number): void;
}

export interface RateTakes {
  limiter: string;
  takes: [key: string, count: number][];
}

const FLUSH_MS = 50;

/**
 * Rate limits across the workers of a box: each worker keeps its own token buckets and, every
 * 50 ms, tells the others (through the primary) how many tokens each caller took here; they take
 * as many from their own buckets. A caller spreading requests over workers is held to the same
 * limit, give or take what it can send in 50 ms.
 */
export class RateShare {
  private readonly pending = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limiters: Record<string, SharedLimiter>,
    private readonly send: (takes: RateTakes) => void,
  ) {
    for (const [name, limiter] of Object.entries(limiters)) limiter.onTake = (key) => this.took(name, key);
  }

  /** Takes made on another worker. */
  receive(m: RateTakes): void {
    const limiter = this.limiters[m.limiter];
    if (limiter) for (const [key, count] of m.takes) limiter.debit(key, count);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const limiter of Object.values(this.limiters)) limiter.onTake = null;
  }

  private took(name: string, key: string): void {
    let m = this.pending.get(name);
    if (!m) this.pending.set(name, (m = new Map()));
    m.set(key, (m.get(key) ?? 0) + 1);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  private flush(): void {
    this.timer = null;
    for (const [limiter, takes] of this.pending) this.send({ limiter, takes: [...takes] });
    this.pending.clear();
  }
}
