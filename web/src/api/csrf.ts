/**
 * The CSRF token of the cookie session: the server sets it in the readable `cns_csrf` cookie
 * (the tokens themselves are HttpOnly) and refuses any write that does not echo it in
 * `X-CSRF-Token`. Only a script of this origin can read it, so other sites cannot forge writes.
 */
export function csrfToken(): string | null {
  const match = /(?:^|;\s*)cns_csrf=([^;]+)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]!) : null;
}

/** The header a request must carry: none for reads. */
export function csrfHeaders(method: string): Record<string, string> {
  const token = /^(GET|HEAD|OPTIONS)$/i.test(method) ? null : csrfToken();
  return token ? { 'x-csrf-token': token } : {};
}
