import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_MODULE, engineDependentTests } from '../../scripts/lib/engineTests.ts';

// The PostgreSQL pass runs only the files that reach test/helpers/testEngine.ts. That is sound only
// while that module is the one place the engine is chosen: nothing else may read CNS_TEST_ENGINE.
const root = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, out);
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.mjs')) out.push(path);
  }
  return out;
}

test('only test/helpers/testEngine.ts reads CNS_TEST_ENGINE (the service never does)', (t) => {
  const readers = ['src', 'test', 'scripts']
    .flatMap((dir) => sources(join(root, dir)))
    .filter((file) => /\bprocess\.env\.CNS_TEST_ENGINE\b|\benv\[['"]CNS_TEST_ENGINE['"]\]/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file));
  t.deepEqual(readers, [ENGINE_MODULE]);
});

test('the PostgreSQL pass takes the files that start servers of the suite, directly or through a helper, and leaves the others', (t) => {
  const chosen = new Set(engineDependentTests(root));
  t.true(chosen.has('test/api/projects.test.ts')); // imports helpers/server.ts, which imports serverDatabases.ts → testEngine.ts
  t.true(chosen.has('test/db/dbCopy.test.ts')); // imports testEngine.ts itself
  t.false(chosen.has('test/content/paths.test.ts')); // no server, no metadata
  t.false(chosen.has('test/db/metadataEngines.test.ts')); // runs both engines itself
  t.false(chosen.has('test/cluster/nodes.test.ts')); // its nodes bring their own PostgreSQL database (the marker)
  t.true(chosen.has('test/cluster/workers.test.ts'));
  t.false(chosen.has(relative(root, fileURLToPath(import.meta.url)).replace(/\.js$/, '.ts')));
  t.true([...chosen].every((file) => file.startsWith('test/') && file.endsWith('.test.ts')));
});
