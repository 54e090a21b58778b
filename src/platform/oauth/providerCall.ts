import { ProviderError, providerMessage } from '../runtime/providerError.ts';
import type { OutboundFetch } from './outboundFetch.ts';

export interface CallAnswer {
  status: number;
  ok: boolean;
  headers: Headers;
  text: string;
  /** The body as JSON, or null when it is not JSON. */
  json<T = Record<string, unknown>>(): T | null;
  /** What the provider said, from its error body (see providerMessage). */
  message(): string;
}

export interface CallRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  /** Absolute, or a path below the provider's API base. */
  url: string;
  headers?: Record<string, string>;
  json?: unknown;
}

/** One request to a provider's API (token checks, GitHub's revocation), through the outbound guard. */
export type ProviderCall = (request: CallRequest) => Promise<CallAnswer>;

/** GitHub refuses API requests without a User-Agent; every provider gets the same one. */
export const USER_AGENT = 'content-node-service';

/**
 * A ProviderCall bound to one provider's API base. Non-2xx answers are returned (the caller knows
 * what a 401 means for it); a request that got no answer at all is a ProviderError (status null).
 */
export function providerCall(provider: string, fetch: OutboundFetch, apiBase: string): ProviderCall {
  const base = apiBase.replace(/\/+$/, '');
  return async ({ method = 'GET', url, headers = {}, json }) => {
    const target = url.startsWith('/') ? base + url : url;
    let res: Response;
    try {
      res = await fetch(target, {
        method,
        headers: {
          'user-agent': USER_AGENT,
          accept: 'application/json',
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
    } catch (err) {
      throw new ProviderError(provider, null, (err as Error).message);
    }
    const text = await res.text();
    return {
      status: res.status,
      ok: res.ok,
      headers: res.headers,
      text,
      json<T>() {
        try {
          return JSON.parse(text) as T;
        } catch {
          return null;
        }
      },
      message: () => providerMessage(Buffer.from(text, 'utf8'), res.status, res.statusText),
    };
  };
}
