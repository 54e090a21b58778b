import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTestBuild } from './lib/bundleTests.ts';
import { engineDependentTests } from './lib/engineTests.ts';
import { sortTestFilesSource } from './lib/testOrder.ts';

/**
 * Type-checks and compiles src/, test/ and scripts/ to JavaScript in `.test-build/`, a mirror of the
 * repository that `npm test` runs the suite in. Each of the ~180 test processes then loads plain
 * JavaScript instead of ~600 modules through a TypeScript loader, which cost more CPU than most
 * tests themselves. Everything that is not compiled is linked from the mirror to the original, so
 * paths relative to a module (`package.json`, `web/dist`, fixtures, git hooks, the sources that
 * the architecture test reads) resolve as they do in the repository. Last, the test files and the
 * modules the tests start as processes are bundled in place (scripts/lib/bundleTests.ts).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, '.test-build');
const COMPILED = ['src', 'test', 'scripts'];
const COPIED = ['bin']; // the executable, so that it finds the compiled CLI beside it
const NOT_MIRRORED = new Set(['.git', '.test-build', 'node_modules', ...COMPILED, ...COPIED]);

rmSync(OUT, { recursive: true, force: true }); // a deleted test must not keep running from an old build
const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'test/tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const name of readdirSync(ROOT)) if (!NOT_MIRRORED.has(name)) symlinkSync(join(ROOT, name), join(OUT, name));
for (const dir of COMPILED) mirror(join(ROOT, dir));
for (const dir of COPIED) mirror(join(ROOT, dir), true);
await bundleTestBuild(OUT);

function mirror(dir: string, copyAll = false): void {
  const target = join(OUT, relative(ROOT, dir));
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = join(dir, entry.name);
    if (entry.isDirectory()) mirror(from, copyAll);
    // A `.mjs` entry point that loads a TypeScript body is copied, so that it finds the compiled body beside it.
    else if (copyAll || entry.name.endsWith('.mjs')) copyFileSync(from, join(target, entry.name));
    else symlinkSync(from, join(target, entry.name)); // the .ts sources too: some tests read or spawn them
  }
}

const { ava } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { ava: Record<string, unknown> };
const config = { ...ava, files: ['.test-build/test/**/*.test.js'], extensions: ['js'], nodeArguments: [] };
// The longest files start first (scripts/lib/testOrder.ts).
const configSource = (c: object) => `export default {\n  ...${JSON.stringify(c, null, 2)},\n  sortTestFiles: ${sortTestFilesSource()},\n};\n`;
writeFileSync(join(OUT, 'ava.config.mjs'), configSource(config));
// The PostgreSQL pass (npm run test:postgres) runs only the files the engine can change; the rest ran already.
const postgres = { ...config, files: engineDependentTests(ROOT).map((file) => `.test-build/${file.replace(/\.ts$/, '.js')}`) };
writeFileSync(join(OUT, 'ava.postgres.config.mjs'), configSource(postgres));
