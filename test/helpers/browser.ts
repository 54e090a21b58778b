import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
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
