/**
 * The signal one upstream request runs under. It aborts when the caller's signal does, or when
 * the streamed reply has been silent for `idleMs`: the SDKs' own timeout only covers the wait for
 * the response headers, so without this a provider that stalls mid-stream would hang the turn.
 * The SDKs end a stream quietly when its signal aborts, so the adapter asks `cut()` afterwards.
 */
export class UpstreamSignal {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private stalled = false;
  private readonly onCallerAbort = () => this.controller.abort();

  constructor(
    private readonly caller: AbortSignal,
    readonly idleMs: number,
  ) {
    if (caller.aborted) this.controller.abort();
    else caller.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Something arrived from the provider: restart the idle clock. */
  alive(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, this.idleMs);
  }

  /** Why the request was cut short, if it was: the caller's abort wins over a stall. */
  cut(): 'aborted' | 'stalled' | null {
    if (this.caller.aborted) return 'aborted';
    return this.stalled ? 'stalled' : null;
  }

  /** Stops the clock and closes the upstream request if it is still open (the consumer stopped early). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }
}
