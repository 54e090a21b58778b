import { api } from './client.ts';
import { refreshSession } from './session.ts';

/** One `change` event of the live feed (README: Data sync and the live change feed). */
export interface ChangeEvent {
  project_version: number;
  actor: { type?: string; id?: string } | string | null;
  message: string | null;
  changes: { node_id: string; path: string; old_path: string | null; operation: string; node_type: string; version: number | null }[];
  /** Set when the commit changed more paths than the event lists. */
  truncated?: boolean;
}

/**
 * Follows a project's change feed. The stream is read with fetch and parsed here (only `id:`,
 * `event:` and `data:` lines matter), authenticated by the session cookie like every call (a
 * GET: no CSRF header; no token in the address, where logs would keep it). fetch rather than
 * EventSource keeps reconnection and the refresh after a 401 in our hands. The
 * feed's address comes from `/auth/config`; only its path is used, because the dashboard is
 * served by the same service and the configured base URL may name another host (a proxy).
 * After a disconnection it reconnects with `Last-Event-ID`, so no change is missed.
 */
export function followChanges(projectId: string, onChange: (e: ChangeEvent) => void, onReady: () => void): () => void {
  const stop = new AbortController();
  let lastId: string | null = null;
  let failures = 0;

  const connect = async (): Promise<void> => {
    const config = await api<{ realtime_url: string; anon_key: string }>('GET', '/auth/config');
    const url = new URL(config.realtime_url, location.origin);
    url.searchParams.set('project_id', projectId);
    const headers: Record<string, string> = { apikey: config.anon_key };
    if (lastId) headers['last-event-id'] = lastId;
    const res = await fetch(url.pathname + url.search, { headers, credentials: 'same-origin', signal: stop.signal });
    if (res.status === 401 && (await refreshSession())) return connect();
    if (!res.ok || !res.body) throw new Error(`change feed answered ${res.status}`);
    failures = 0;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = parseBlock(block);
        if (event.id) lastId = event.id;
        if (event.name === 'ready') onReady();
        if (event.name === 'change' && event.data) onChange(JSON.parse(event.data) as ChangeEvent);
        if (event.name === 'revoked') stop.abort();
      }
    }
  };

  const loop = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      try {
        await connect();
      } catch {
        failures++;
      }
      if (stop.signal.aborted) return;
      // Back off on repeated failures so a down server is not hammered; a clean end reconnects at once.
      if (failures > 0) await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** failures)));
    }
  };
  void loop();
  return () => stop.abort();
}

function parseBlock(block: string): { id?: string; name: string; data?: string } {
  const out: { id?: string; name: string; data?: string } = { name: 'message' };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') out.id = value;
    else if (field === 'event') out.name = value;
    else if (field === 'data') out.data = out.data === undefined ? value : `${out.data}\n${value}`;
  }
  return out;
}
