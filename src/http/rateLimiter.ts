/**
 * Token buckets keyed by caller: each holds up to `max` requests and refills continuously at
 * max per window, so bursts are allowed but the sustained rate is bounded. `max = 0` disables.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();
  private readonly refillPerMs: number;
  private sweepAt = 0;

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {
    this.refillPerMs = max / windowMs;
  }

  /** Takes one token; returns 0 when allowed, otherwise the seconds to wait before retrying. */
  take(key: string, now = Date.now()): number {
    if (this.max <= 0) return 0;
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.max, updated: now };
    bucket.tokens = Math.min(this.max, bucket.tokens + (now - bucket.updated) * this.refillPerMs);
    bucket.updated = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.onTake?.(key);
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000));
  }

  /** Several workers: told of each token taken here, to tell the other workers (cluster/rateShare.ts). */
  onTake: ((key: string) => void) | null = null;

  /** Tokens the same caller took on another worker: this bucket pays for them too (never below -max). */
  debit(key: string, count: number, now = Date.now()): void {
    if (this.max <= 0) return;
    const bucket = this.buckets.get(key) ?? { tokens: this.max, updated: now };
    bucket.tokens = Math.max(-this.max, Math.min(this.max, bucket.tokens + (now - bucket.updated) * this.refillPerMs) - count);
    bucket.updated = now;
    this.buckets.set(key, bucket);
  }

  /** Full buckets carry no information; dropping them bounds memory to active callers. */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + this.windowMs;
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.updated) * this.refillPerMs >= this.max) this.buckets.delete(key);
    }
  }
}
