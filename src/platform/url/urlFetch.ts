import { guardedRequest, readLimited } from '../../net/guardedFetch.ts';
import { redactUrl } from '../../logging/redact.ts';

export interface FetchUrlOptions {
  maxBytes: number;
  timeoutMs?: number;
  /** Allow loopback and private addresses (CNS_URL_FETCH_ALLOW_PRIVATE; off by default). */
  allowPrivate?: boolean;
}

const MAX_REDIRECTS = 5;

/**
 * Fetches one URL for a `url` sync through the outbound guard (src/net): public addresses only
 * by default, redirect targets included, bounded in time, size and redirects. Error messages
 * (recorded in sync runs) name the address redacted.
 */
export async function fetchUrl(url: string, options: FetchUrlOptions): Promise<{ bytes: Buffer; contentType: string | null }> {
  const signal = AbortSignal.timeout(options.timeoutMs ?? 15_000);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await guardedRequest(current, { allowPrivate: options.allowPrivate, signal });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects from ${redactUrl(url)}`);
      current = new URL(res.headers.location, current);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new Error(`GET ${redactUrl(current.toString())} answered ${status}`);
    }
    const bytes = await readLimited(res, { maxBytes: options.maxBytes, what: redactUrl(url) });
    return { bytes, contentType: (res.headers['content-type'] as string | undefined) ?? null };
  }
}
