import { csrfHeaders } from './csrf.ts';
import { refreshSession, sessionUser } from './session.ts';

/** An API error in the service's envelope: `code` (CONFLICT, VALIDATION_ERROR, …) and `details`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

export const API = '/api/v1';

/**
 * Calls the public REST API (the dashboard has no other way in), authenticated by the session
 * cookie, with the CSRF header on writes. A refused access token is refreshed once and the call
 * repeated; every answer is unwrapped from the envelope.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res = await send(method, path, body);
  if (res.status === 401 && sessionUser() && (await refreshSession())) res = await send(method, path, body);
  const envelope = await res.json().catch(() => null);
  if (!res.ok || !envelope?.success) {
    throw new ApiError(res.status, envelope?.code ?? 'HTTP_' + res.status, envelope?.message ?? res.statusText, envelope?.error?.details ?? null);
  }
  return envelope.data as T;
}

function send(method: string, path: string, body: unknown): Promise<Response> {
  const headers = csrfHeaders(method);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(API + path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
}

/** `?a=1&b=2` from an object, leaving out undefined values. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
