import type { BrowserContext } from 'playwright-core';

/** The browser's cookies by name. */
export async function cookiesOf(context: BrowserContext): Promise<Record<string, string>> {
  return Object.fromEntries((await context.cookies()).map((c) => [c.name, c.value]));
}

/** Polls `check` until it holds, failing after `ms` (no fixed sleeps). */
async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * The cookies once the sign-in's are stored: Chromium stores a response's cookies
 * asynchronously, so they may lag a little behind what the page already shows.
 */
export async function storedSession(context: BrowserContext): Promise<Record<string, string>> {
  await until(async () => Boolean((await cookiesOf(context)).cns_access), 'the access cookie of the sign-in');
  return cookiesOf(context);
}

/**
 * Makes the dashboard's access cookie unusable, as if it had expired, leaving the refresh cookie:
 * after the sign-in's cookie is stored (else it could land after ours and undo it).
 */
export async function spoilAccessCookie(context: BrowserContext, serverUrl: string): Promise<void> {
  await storedSession(context);
  await context.addCookies([{ name: 'cns_access', value: 'expired', domain: new URL(serverUrl).hostname, path: '/api', httpOnly: true, sameSite: 'Strict' }]);
  await until(async () => (await cookiesOf(context)).cns_access === 'expired', 'the spoiled access cookie');
}
