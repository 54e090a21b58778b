import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Every process that imports the server (each test file, `cns serve`, each worker) pays for what it
// loads. These packages are imported on first use only (an MCP session, a MySQL connection, an
// upload, a sync run...): a static import of one of them, anywhere the server reaches, would load
// it in every process again without anything else failing.
const LAZY = [
  '@modelcontextprotocol/sdk',
  'mysql2',
  'turndown',
  'turndown-plugin-gfm',
  'ajv',
  'formidable',
  'yaml',
  'marked',
  'papaparse',
  'jmespath',
  're2js',
  // Lazy before: the sandbox's shell, the converters' parsers, the LLM SDKs.
  'just-bash',
  'jsdom',
  'dompurify',
  'exceljs',
  'mammoth',
  'unpdf',
  'tesseract.js',
  '@anthropic-ai/sdk',
  'openai',
];

// The compiled server beside the compiled test, or the TypeScript one when the suite runs through tsx (its loader is in execArgv).
const server = fileURLToPath(new URL(`../../src/app/server${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

/** Every file the ESM loader loaded (a load hook writes each URL down) and every CommonJS module required. */
const script = `
import { createRequire, register } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [log, server] = process.argv.slice(1);
register('data:text/javascript,' + encodeURIComponent(
  "import { appendFileSync } from 'node:fs';" +
  "export async function load(url, context, next) { appendFileSync(" + JSON.stringify(log) + ", url + '\\\\n'); return next(url, context); }"));
await import(pathToFileURL(server).href);
const esm = readFileSync(log, 'utf8').split('\\n').filter(Boolean);
writeFileSync(log, JSON.stringify([...esm, ...Object.keys(createRequire(import.meta.url).cache)]));
`;

test('importing the server loads none of the packages it imports on first use', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-lazy-'));
  try {
    const log = join(dir, 'loaded');
    const run = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script, log, server], { encoding: 'utf8', timeout: 60_000 });
    t.is(run.status, 0, run.stderr);
    const files = (JSON.parse(readFileSync(log, 'utf8')) as string[]).map((f) => f.replaceAll('\\', '/'));
    t.true(files.some((f) => f.includes('/node_modules/kysely/')), 'the log holds what the server loads');
    t.deepEqual(
      LAZY.filter((pkg) => files.some((f) => f.includes(`/node_modules/${pkg}/`))),
      [],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
