import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The house rules that a reader of the tree relies on, checked on the sources themselves.
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Each file's relative imports that exist at run time (type-only imports are erased), or all of them. */
function importGraph(options: { types?: boolean } = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(src)) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^'";]*?from\s+'(\.[^']+)'/gm)) {
      if (!m[1] || options.types) deps.push(resolve(dirname(file), m[2]!));
    }
    for (const m of text.matchAll(/import\('(\.[^']+)'\)/g)) deps.push(resolve(dirname(file), m[1]!));
    graph.set(file, deps);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(src, w));
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('src has no import cycles', (t) => {
  t.deepEqual(cycles(importGraph()), []);
});

test('REST resource folders do not import each other (shared code lives in api/shared and api/presenters)', (t) => {
  const shared = new Set(['shared', 'presenters']);
  const crossings: string[] = [];
  for (const [file, deps] of importGraph()) {
    const [top, area, ...rest] = relative(src, file).split('/');
    if (top !== 'api' || rest.length === 0 || shared.has(area!)) continue;
    for (const dep of deps) {
      const [depTop, depArea, ...depRest] = relative(src, dep).split('/');
      if (depTop === 'api' && depRest.length > 0 && depArea !== area && !shared.has(depArea!)) crossings.push(`${relative(src, file)} -> ${relative(src, dep)}`);
    }
  }
  t.deepEqual(crossings, []);
});

/**
 * The layers of src/, bottom to top (docs/architecture.md draws the same picture). A folder
 * imports only folders of a lower layer, types included: no upward arrow (api→app,
 * features→http, mcp→api, events→features, content→anything above it).
 */
const layers: string[][] = [
  ['util', 'errors', 'types', 'config', 'logging'],
  ['db', 'net'],
  // The core: projects' repositories and their index.
  ['content'],
  ['collab'],
  // Accounts: credentials and the records they authenticate as (each needs the other's types).
  ['auth', 'domain'],
  ['policies'],
  ['events'],
  // Several workers: leases, ownership and the bus between processes (the primary and the
  // worker's wiring are in app/, the forwarding middleware in http/workers/).
  ['cluster'],
  ['commands'],
  // The wire shapes REST and MCP share, over the commands' results.
  ['presenters'],
  ['search'],
  ['llm'],
  ['sandbox'],
  ['tools'],
  ['ingest'],
  ['data'],
  ['publish'],
  ['analytics'],
  ['sync'],
  ['platform'],
  // Outgoing webhooks: hear the change bus, finished sync runs and ingestion tasks.
  ['webhooks'],
  ['agents'],
  // The surfaces: http is the edge they share (Koa middleware, the envelope, route declarations).
  ['http'],
  ['mcp'],
  ['remote'],
  ['api'],
  ['app'],
  ['cli'],
];
const layerOf = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
/** Folders of one layer may import each other only where the layer says so (accounts); file-level cycles are refused above. */
const sameLayerAllowed = (a: string, b: string) => (a === 'auth' && b === 'domain') || (a === 'domain' && b === 'auth');

test('every folder of src has a layer', (t) => {
  const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory());
  t.deepEqual(folders.filter((f) => !layerOf.has(f)), []);
});

test('layers import only from below: no upward arrows (types included)', (t) => {
  const upward = new Set<string>();
  for (const [file, deps] of importGraph({ types: true })) {
    const top = relative(src, file).split('/')[0]!;
    for (const dep of deps) {
      const depTop = relative(src, dep).split('/')[0]!;
      if (depTop === top || depTop.startsWith('..')) continue;
      const [from, to] = [layerOf.get(top) ?? -1, layerOf.get(depTop) ?? -1];
      if (to > from || (to === from && !sameLayerAllowed(top, depTop))) upward.add(`${relative(src, file)} -> ${relative(src, dep)}`);
    }
  }
  t.deepEqual([...upward].sort(), []);
});
