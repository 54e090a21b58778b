import { API, ApiError } from '../api/client.ts';
import { csrfHeaders } from '../api/csrf.ts';
import { refreshSession, sessionUser } from '../api/session.ts';
import { readSse } from './sse.ts';
import type { ChatEvent } from './types.ts';

export interface TurnRequest {
  agent_id: string;
  message: string;
  session_id?: string;
}

/**
 * One chat turn: `POST /agents`, answered as Server-Sent Events, read with fetch (EventSource
 * cannot POST). Authenticated as every other call of the dashboard (`api()` in client.ts): the
 * session cookie, the CSRF header on this write, one refresh and retry after a 401. A refusal
 * before the stream (the envelope: 404, 409, 422, 503 naming the missing setting…) is thrown as
 * an ApiError; once streaming, every event goes to `onEvent`. Aborting `signal` closes the
 * connection, which cancels the turn on the server.
 */
export async function streamTurn(body: TurnRequest, signal: AbortSignal, onEvent: (event: ChatEvent) => void): Promise<void> {
  let res = await send(body, signal);
  if (res.status === 401 && sessionUser() && (await refreshSession())) res = await send(body, signal);
  if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const envelope = await res.json().catch(() => null);
    throw new ApiError(res.status, envelope?.code ?? `HTTP_${res.status}`, envelope?.message ?? res.statusText, envelope?.error?.details ?? null);
  }
  await readSse(res.body, (data) => {
    let event: ChatEvent;
    try {
      event = JSON.parse(data) as ChatEvent;
    } catch {
      return; // not an event of ours
    }
    onEvent(event);
  });
}

function send(body: TurnRequest, signal: AbortSignal): Promise<Response> {
  return fetch(`${API}/agents`, {
    method: 'POST',
    headers: { ...csrfHeaders('POST'), 'content-type': 'application/json', accept: 'text/event-stream' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
    signal,
  });
}
