export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/** A test subscriber of the live change feed: collects events and waits for them. */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  status = 0;
  closed = false;
  private readonly abort = new AbortController();
  private listeners = new Set<() => void>();
  private done!: Promise<void>;

  private constructor() {}

  static async open(url: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, signal: c.abort.signal });
    c.status = res.status;
    c.done = c.read(res).catch(() => undefined).finally(() => {
      c.closed = true;
      c.wake();
    });
    return c;
  }

  /** Change events (`event: change`) with their parsed data. */
  get changes(): { id: number; data: { project_version: number; actor: { type: string; id: string }; message: string; changes: { node_id: string; path: string; old_path: string | null; operation: string; version: number }[] } }[] {
    return this.events.filter((e) => e.event === 'change').map((e) => ({ id: Number(e.id), data: JSON.parse(e.data) }));
  }

  async waitFor<T>(what: string, check: () => T, timeoutMs = 30_000): Promise<NonNullable<T>> {
    const first = check();
    if (first) return first as NonNullable<T>;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`timed out waiting for ${what}; events: ${JSON.stringify(this.events)}`));
      }, timeoutMs);
      const listener = () => {
        const v = check();
        if (v || this.closed) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          if (v) resolve(v as NonNullable<T>);
          else reject(new Error(`stream closed while waiting for ${what}; events: ${JSON.stringify(this.events)}`));
        }
      };
      this.listeners.add(listener);
    });
  }

  close(): Promise<void> {
    this.abort.abort();
    return this.done;
  }

  private wake(): void {
    for (const l of [...this.listeners]) l();
  }

  private async read(res: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: string | null = null;
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) this.comments++;
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (data.length) this.events.push({ id, event, data: data.join('\n') });
      }
      this.wake();
    }
  }
}
