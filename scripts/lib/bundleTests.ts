import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * Bundles the test build's entry points in place: each test file, and each module the tests
 * start in a process of its own (the CLI, a worker of `cns serve --workers`, the children of the
 * sandbox, the ingestion pool and the search pool). A test process then loads a few dozen
 * files instead of ~1,300: importing the server costs about half the CPU (0.37 s against 0.72 s
 * here), in each of ~400 test processes and the servers and commands they spawn.
 *
 * Every other compiled module stays where tsc wrote it, and each bundled module keeps the
 * `import.meta.url` of its place there, so that what it finds relative to itself (package.json,
 * web/dist, fixtures, a worker's `.mjs`, the sources the architecture tests read) resolves as
 * before. Packages stay external but for a few plain ESM ones that every server loads; those that
 * find files beside themselves (pino's transports, the sandbox's wasm, tesseract, jsdom) must not
 * be bundled.
 */
const BUNDLED_PACKAGES = new Set(['kysely', 'zod', 'jose', 'koa', '@koa/router', 'isomorphic-git', 'diff', '@streamparser/json', 'zod-to-json-schema']);

/** The compiled bodies that the service starts as processes or workers of their own. */
const SPAWNED = ['src/cli/main.js', 'src/app/workerMain.js', 'src/sandbox/runtime/justBashChild.js', 'src/ingest/worker/conversionChild.js', 'src/search/queryWorker.js'];

/** Chunks shared by the entries, beside them in the build. */
const CHUNKS = 'chunks';

export async function bundleTestBuild(out: string): Promise<void> {
  const entries = [...testFiles(join(out, 'test')), ...SPAWNED.map((file) => join(out, file))];
  const result = await build({
    entryPoints: entries,
    outdir: out,
    outbase: out,
    allowOverwrite: true,
    write: false,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    mainFields: ['module', 'main'],
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    // A bundled CommonJS package may call require (koa's dependencies do).
    banner: { js: "import { createRequire as __cnsCreateRequire } from 'node:module'; const require = __cnsCreateRequire(import.meta.url);" },
    logLevel: 'warning',
    plugins: [externalPackages(), placeKeepingMeta()],
  });
  // Written after the whole build is read: the entries overwrite the files they were made from.
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.contents);
  }
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.js'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function externalPackages(): Plugin {
  return {
    name: 'external-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:')) return { external: true };
        const parts = args.path.split('/');
        const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        return BUNDLED_PACKAGES.has(name) ? undefined : { external: true };
      });
    },
  };
}

/** Each compiled module keeps its own place as `import.meta.url` (and `dirname`, `filename`) inside a bundle. */
function placeKeepingMeta(): Plugin {
  return {
    name: 'place-keeping-meta',
    setup(b) {
      b.onLoad({ filter: /\.m?js$/ }, (args) => {
        if (args.path.includes('/node_modules/')) return undefined;
        const text = readFileSync(args.path, 'utf8')
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path));
        return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}
