#!/usr/bin/env node
// The `cns` executable: the TypeScript sources run directly through tsx, so there is no build step.
// (The test build, scripts/build-tests.ts, compiles them beside a copy of this file: then that runs.)
import { existsSync } from 'node:fs';

const compiled = new URL('../src/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
