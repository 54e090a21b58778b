import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The test files whose outcome can depend on the metadata engine: those that import, directly or
 * through helpers, `test/helpers/testEngine.ts`, the one module that reads CNS_TEST_ENGINE and
 * gives servers a PostgreSQL database. Every other file runs the same on both engines (it starts
 * no server of the suite's, or tests both engines itself), so the PostgreSQL pass runs only these.
 */
export const ENGINE_MODULE = 'test/helpers/testEngine.ts';
/**
 * A test file with this line gives every server it starts a PostgreSQL database of its own
 * (CNS_DATABASE_URL: a cluster's nodes): the engine is not the pass's to choose, and the
 * PostgreSQL pass would run it again unchanged.
 */
export const OWN_DATABASE_MARKER = '// cns-test: its servers bring their own PostgreSQL database';

export function engineDependentTests(root: string): string[] {
  const files = typeScriptFiles(join(root, 'test'));
  const imports = new Map(files.map((file) => [file, relativeImports(file)]));
  const engine = join(root, ENGINE_MODULE);
  const reaches = new Map<string, boolean>();
  const visit = (file: string, path: Set<string>): boolean => {
    if (file === engine) return true;
    const known = reaches.get(file);
    if (known !== undefined) return known;
    if (path.has(file)) return false; // a cycle: its other edges decide
    path.add(file);
    const found = (imports.get(file) ?? []).some((dep) => visit(dep, path));
    path.delete(file);
    reaches.set(file, found);
    return found;
  };
  return files
    .filter((file) => file.endsWith('.test.ts') && visit(file, new Set()) && !readFileSync(file, 'utf8').includes(OWN_DATABASE_MARKER))
    .map((file) => relative(root, file))
    .sort();
}

function typeScriptFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) typeScriptFiles(path, out);
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Static and dynamic imports and re-exports of relative paths; type-only ones too (harmless: they only add files). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const deps: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), m[1]!);
    if (existsSync(target)) deps.push(target);
  }
  return deps;
}
