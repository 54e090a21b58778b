/**
 * Cooperative time slicing for work that would otherwise hold the event loop for seconds (a
 * 100,000-file commit, a tree of 200,000 nodes): loops call `tick()` per item, which yields to
 * the event loop once the slice has run `budgetMs`, so other requests are served in between.
 */
export class TimeSlice {
  private start = performance.now();

  constructor(private readonly budgetMs = 5) {}

  /** True once this slice has used its budget (the caller should end a transaction and yield). */
  due(): boolean {
    return performance.now() - this.start >= this.budgetMs;
  }

  /** Yields when the budget is used up. */
  async tick(): Promise<void> {
    if (this.due()) await this.yield();
  }

  /** Lets pending I/O and timers run, then starts a new slice. */
  async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}
