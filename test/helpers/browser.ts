import { existsSync } from 'node:fs';
import type { TestFn } from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureWebBuilt } from '../../scripts/build-web.ts';

/** Debian's chromium (`apt-get install -y chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CNS_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Headless chromium for the dashboard's tests, after making sure the dashboard is built. A
 * missing browser is a failure with the fix in its message, never a silent skip.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (or set CNS_CHROMIUM) to run the browser tests.`);
  }
  await ensureWebBuilt();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What each dashboard test gets: its own browser context and page, the page's uncaught errors and its CSP violations. */
export interface PageContext {
  page: Page;
  context: BrowserContext;
  errors: string[];
  cspViolations: string[];
  /** Gives this test's turn to the next waiting one (see `pageTurns`). */
  release?: () => void;
}

/**
 * At most PAGES_AT_ONCE open pages per test file. Ava starts every test of a file at once, and
 * fourteen chromium pages loading together on two cores took 20 s for a one-second test, past
 * playwright's 30 s navigation limit when other files ran beside them. Waiting here costs the
 * file nothing: its pages were taking turns on the CPU anyway.
 */
const PAGES_AT_ONCE = Number(process.env.CNS_TEST_PAGES ?? 3);
const pageTurns = (() => {
  let open = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else open--;
  };
  return {
    async acquire(): Promise<() => void> {
      if (open < PAGES_AT_ONCE) open++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      let released = false;
      return () => {
        if (!released) (released = true), release();
      };
    },
  };
})();

/**
 * Records every Content-Security-Policy violation of the context's pages and frames into
 * `into`: the `securitypolicyviolation` event each document fires (reported through a binding)
 * and chromium's own "Refused to …" console errors.
 */
export async function recordCspViolations(context: BrowserContext, into: string[]): Promise<void> {
  await context.exposeBinding('__cnsCspViolation', (_source, text: string) => void into.push(text));
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      window.__cnsCspViolation(e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' (' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber + ' ' + e.sample + ')'));`,
  });
  context.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|^Refused to/.test(m.text())) into.push(m.text());
  });
}

/**
 * Gives each test of a file a fresh context and page (1280 × 900) in `browser()`, and fails the
 * test when its page threw an uncaught error or broke the dashboard's Content-Security-Policy.
 */
export function freshPageEachTest(test: TestFn<PageContext>, browser: () => Browser, options: { permissions?: string[] } = {}): void {
  test.beforeEach(async (t) => {
    t.context.release = await pageTurns.acquire();
    t.context.context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    if (options.permissions) await t.context.context.grantPermissions(options.permissions);
    t.context.page = await t.context.context.newPage();
    t.context.errors = [];
    t.context.cspViolations = [];
    await recordCspViolations(t.context.context, t.context.cspViolations);
    t.context.page.on('pageerror', (e) => t.context.errors.push(e.message));
  });
  test.afterEach.always(async (t) => {
    await t.context.context?.close();
    t.context.release?.();
    t.deepEqual(t.context.errors, [], 'no uncaught errors in the page');
    t.deepEqual(t.context.cspViolations, [], 'no Content-Security-Policy violations');
  });
}
