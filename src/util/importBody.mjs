// Loads the TypeScript body of a plain-JavaScript entry point (a child process or a worker thread
// starts without the service's TypeScript loader). Where the body was compiled beside the entry
// (the test build, scripts/build-tests.ts), the JavaScript is loaded; otherwise tsx's scoped import.
import { existsSync } from 'node:fs';

/** `name` without extension, relative to `parentUrl` (the entry's import.meta.url). */
export async function importBody(name, parentUrl) {
  const compiled = new URL(`${name}.js`, parentUrl);
  if (existsSync(compiled)) return import(compiled.href);
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(`${name}.ts`, parentUrl);
}
