import type { TestServer } from '../helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ChatEvent = { type: string; [key: string]: any };

export interface ChatAnswer {
  status: number;
  contentType: string | null;
  /** The events, in order (an error answer before the stream: empty). */
  events: ChatEvent[];
  /** The envelope of an answer that is not a stream. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * `POST /agents` as a client reads it: the SSE `data:` lines parsed as they arrive. `onEvent`
 * sees each event as it comes; returning `'disconnect'` closes the connection right there.
 */
export async function chat(
  server: TestServer,
  token: string,
  body: Record<string, unknown>,
  onEvent?: (event: ChatEvent, events: ChatEvent[]) => 'disconnect' | void,
): Promise<ChatAnswer> {
  const controller = new AbortController();
  const res = await fetch(`${server.url}/api/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const contentType = res.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream')) return { status: res.status, contentType, events: [], body: await res.json() };
  const events: ChatEvent[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        for (const line of frame.split('\n')) {
          if (!line.startsWith('data: ')) continue;
          const event = JSON.parse(line.slice(6)) as ChatEvent;
          events.push(event);
          if (onEvent?.(event, events) === 'disconnect') {
            controller.abort();
            return { status: res.status, contentType, events, body: null };
          }
        }
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return { status: res.status, contentType, events, body: null };
}

/** The event types in order, consecutive `text` pieces counted once. */
export function shape(events: ChatEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) if (!(e.type === 'text' && out.at(-1) === 'text')) out.push(e.type);
  return out;
}

/** The text of the answer, pieces joined. */
export const textOf = (events: ChatEvent[]) => events.filter((e) => e.type === 'text').map((e) => e.content).join('');

/** Polls `check` until it returns a value (not undefined), or fails after the deadline. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, what: string, deadlineMs = 10_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
