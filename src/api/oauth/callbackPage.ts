import type { Context } from 'koa';
import { escapeHtml } from '../../publish/htmlPage.ts';

/** No script, nothing loaded, no form, not framed: the page only says what happened. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** Seconds the page shows before the browser moves on to `redirect_uri`. */
const REDIRECT_DELAY_S = 2;

export interface CallbackOutcome {
  ok: boolean;
  status: number;
  title: string;
  message: string;
  /** Where the browser goes next (already checked: this service's origin), or null. */
  redirectTo: string | null;
  /** Told to the page the browser goes to: `oauth=connected|error`, `provider`, and the error code. */
  params: Record<string, string>;
}

/**
 * The small page the browser lands on after the provider: success or failure in words (escaped),
 * then, with a `redirect_uri`, a refresh to it carrying the outcome in its query. The URL of this
 * page holds the code and the state, so it is neither cached nor sent on as a Referer.
 */
export function sendCallbackPage(ctx: Context, o: CallbackOutcome): void {
  let next: string | null = null;
  if (o.redirectTo) {
    const u = new URL(o.redirectTo);
    for (const [k, v] of Object.entries(o.params)) u.searchParams.set(k, v);
    next = u.toString();
  }
  const refresh = next ? `<meta http-equiv="refresh" content="${REDIRECT_DELAY_S};url=${escapeHtml(next)}">\n` : '';
  const link = next ? `<p><a href="${escapeHtml(next)}">Continue</a></p>\n` : '<p>You can close this window.</p>\n';
  ctx.status = o.status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${refresh}<title>${escapeHtml(o.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}.error h1{color:#a00}</style>
</head>
<body class="${o.ok ? 'ok' : 'error'}">
<h1>${escapeHtml(o.title)}</h1>
<p>${escapeHtml(o.message)}</p>
${link}</body>
</html>
`;
}
