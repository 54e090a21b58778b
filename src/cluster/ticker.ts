/**
 * Runs `tick` every `periodMs`, one at a time (the next period starts when a tick ends), on an
 * unref'd timer: a cluster node's heartbeat and its coordinator steps. stop() waits for a tick
 * in flight; a tick sees `running` false once a stop began.
 */
export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | null = null;
  private on = false;

  constructor(
    private readonly periodMs: number,
    private readonly tick: () => Promise<void>,
  ) {}

  get running(): boolean {
    return this.on;
  }

  start(): void {
    this.on = true;
    this.schedule();
  }

  /** Stops at once (from inside a tick too); no tick starts after it. */
  halt(): void {
    this.on = false;
    clearTimeout(this.timer);
  }

  /** halt(), then waits for a tick in flight. */
  async stop(): Promise<void> {
    this.halt();
    await this.ticking;
  }

  private schedule(): void {
    if (!this.on) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = null;
        this.schedule();
      });
    }, this.periodMs);
    this.timer.unref();
  }
}
