/** A parsed Server-Sent Event. */
export interface FeedEvent {
  id: string | null;
  event: string;
  data: string;
}

/**
 * Follows the live change feed (`GET /api/v1/events`) over fetch, reconnecting with growing
 * back-off after any loss and resuming from the last event id. Each (re)connection emits the
 * server's `ready` event, on which the sync catches up from its own cursor.
 */
export class FeedSubscription {
  private readonly abort = new AbortController();
  private lastEventId: string | null = null;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly onEvent: (e: FeedEvent) => void,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }

  private async loop(): Promise<void> {
    let delay = 200;
    while (!this.stopped) {
      try {
        await this.connect();
        delay = 200;
      } catch (err) {
        if (this.stopped) return;
        this.onError(err as Error);
      }
      if (this.stopped) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }

  private async connect(): Promise<void> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' };
    if (this.lastEventId) headers['last-event-id'] = this.lastEventId;
    const res = await fetch(this.url, { headers, signal: this.abort.signal });
    if (!res.ok || !res.body) throw new Error(`change feed answered ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const e = parseBlock(block);
        if (!e) continue;
        if (e.id !== null) this.lastEventId = e.id;
        this.onEvent(e);
        if (e.event === 'resync') this.lastEventId = null;
      }
    }
  }
}

function parseBlock(block: string): FeedEvent | null {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0 && id === null) return null;
  return { id, event, data: data.join('\n') };
}
