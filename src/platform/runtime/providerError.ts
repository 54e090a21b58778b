import { redactUrlsIn } from '../../logging/redact.ts';

/**
 * The platform refused or failed a request (a non-2xx answer after retries, a rate limit longer
 * than the runtime waits, a network failure that outlasted the retries). `message` carries the
 * provider's own words, so a failed run says what the platform said.
 */
export class ProviderError extends Error {
  readonly code = 'PROVIDER_ERROR';
  constructor(
    readonly provider: string,
    /** The HTTP status, or null when no answer came (network failure). */
    readonly status: number | null,
    /** What the provider said (from its error body), without our prefix. */
    readonly providerMessage: string,
  ) {
    super(redactUrlsIn(`${provider} ${status === null ? 'could not be reached' : `answered ${status}`}: ${providerMessage}`));
    this.name = 'ProviderError';
  }
}

/**
 * The provider's message from an error body: the JSON shapes platforms use (`message` for
 * GitHub and Notion, `error.message` for Airtable, `errors[0].message` for GraphQL such as
 * Linear, OAuth's `error_description`), else the start of the text, else the status line.
 */
export function providerMessage(body: Buffer, status: number, statusText?: string): string {
  const text = body.toString('utf8').trim();
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const first = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
    const err = j.error;
    const errors = Array.isArray(j.errors) ? (j.errors[0] as Record<string, unknown> | undefined) : undefined;
    const found =
      first(j.message) ??
      (err && typeof err === 'object' ? first((err as Record<string, unknown>).message) : undefined) ??
      (errors && typeof errors === 'object' ? first(errors.message) : undefined) ??
      first(j.error_description) ??
      first(err) ??
      first(j.detail);
    if (found) return clip(found);
  } catch {
    /* not JSON: the text itself */
  }
  if (text !== '' && !text.startsWith('<')) return clip(text);
  return statusText ? `${status} ${statusText}` : `HTTP ${status}`;
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > 500 ? `${one.slice(0, 500)}…` : one;
}
