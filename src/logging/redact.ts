/** What a redacted secret is replaced with in logs and shown addresses. */
export const REDACTED = '[redacted]';

/** Path segments that are bearer secrets by position: presigned upload/download tokens, invitation tokens. */
const secretSegments: RegExp[] = [
  /(\/nodes\/(?:upload|download)\/)[^/?#]+/g,
  /(\/invitations\/)(?!$)([^/?#]+)(?=\/accept)/g,
];

/** Segments that look like credentials wherever they appear: access keys and JWTs. */
const credentialLike = /(^|\/)(cns_[A-Za-z0-9_-]{8,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)(?=\/|$)/g;

/** A request path fit for a log line: bearer tokens carried in the path are replaced by [redacted]. */
export function redactPath(path: string): string {
  let out = path;
  for (const re of secretSegments) out = out.replace(re, (_m, prefix: string) => `${prefix}${REDACTED}`);
  return out.replace(credentialLike, (_m, lead: string) => `${lead}${REDACTED}`);
}

/**
 * An address fit to show or record: without userinfo (user:password@) and without query string
 * or fragment, where tokens usually travel. Not a URL: returned as is, cut at the first `?`.
 */
export function redactUrl(address: string): string {
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    return address.replace(/\/\/[^/@?#]*@/, '//').split(/[?#]/)[0]!;
  }
  if (u.username === '' && u.password === '' && u.search === '' && u.hash === '' && !address.includes('@')) return address;
  const hadQuery = u.search !== '';
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return u.toString() + (hadQuery ? `?${REDACTED}` : '');
}

/** Every http(s) address inside a text (a connection name, an error) passed through redactUrl. */
export function redactUrlsIn(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (u) => redactUrl(u));
}

/** Replaces a password wherever it appears in a driver's message (drivers do not echo it, but nothing relies on that). */
export function scrub(message: string, password: string | null): string {
  return password && password.length >= 3 ? message.split(password).join(REDACTED) : message;
}
