import { readFileSync } from 'node:fs';

/** The version of package.json, read once. */
export const serviceVersion: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
