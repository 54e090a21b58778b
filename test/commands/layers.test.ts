import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Commands and presenters sit below every surface; MCP and the tools library reach the content
// through them, never through the REST surface.
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The top folders of src/ that the files of `folder` import (type-only imports included). */
function importedTops(folder: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sources(join(src, folder))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/gm)) {
      const top = relative(src, resolve(dirname(file), m[1]!)).split('/')[0]!;
      found.set(top, [...(found.get(top) ?? []), relative(src, file)]);
    }
  }
  return found;
}

test('nothing in mcp/ or tools/ imports api/', (t) => {
  for (const folder of ['mcp', 'tools']) t.deepEqual(importedTops(folder).get('api') ?? [], [], folder);
});

test('commands/ and presenters/ import no surface, no http and no app', (t) => {
  for (const folder of ['commands', 'presenters']) {
    const tops = importedTops(folder);
    for (const surface of ['app', 'api', 'http', 'mcp', 'tools', 'agents', 'remote', 'cli']) t.deepEqual(tops.get(surface) ?? [], [], `${folder} -> ${surface}`);
  }
});

test('commands/ answer domain values: they import no presenter', (t) => {
  t.deepEqual(importedTops('commands').get('presenters') ?? [], []);
});
