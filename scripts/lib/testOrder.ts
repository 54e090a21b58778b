/**
 * The suite's longest files (10-40 s each, most of it waiting on chromium, spawned services or
 * deadlines), measured on this machine. Ava starts them first, so that the short files fill in
 * beside them instead of the pass ending on one of them alone (it did: the dashboard's files
 * came last in alphabetical order). The dashboard's files alternate with others: four of them at
 * once, each with three pages, would crowd two cores past playwright's time limits. A file
 * missing here only runs later; a stale entry matches nothing.
 */
export const LONG_FIRST = [
  'test/web/history',
  'test/cluster/nodesFaults',
  'test/sync/cli',
  'test/cluster/nodes',
  'test/web/dashboard',
  'test/ingest/pool',
  'test/web/settings',
  'test/git/push',
  'test/web/chat',
  'test/foundation/openapi-samples',
  'test/web/search',
  'test/git/forMain',
  'test/web/session',
  'test/ingest/limits',
  'test/web/urls',
  'test/sandbox/workspace-export',
  'test/web/quickOpen',
  'test/ingest/queue',
  'test/web/phone',
  'test/cluster/workerCrash',
  'test/web/uploadMove',
  'test/content/largeCommit',
  'test/web/preview',
  'test/cluster/workers',
  'test/web/framing',
  'test/nodes/uploadGrants',
  'test/foundation/auth',
  'test/cluster/surfaces',
  'test/sandbox/workspace',
  'test/content-api/crash',
  'test/data/dbConnectors',
  'test/content/reconcile',
  'test/foundation/serve',
];

/** Ava's `sortTestFiles` for a build whose test files end in `.test.js`, as source to put in its config. */
export function sortTestFilesSource(): string {
  return `(a, b) => {
    const long = ${JSON.stringify(LONG_FIRST)};
    const rank = (file) => { const i = long.findIndex((name) => file.endsWith(\`/\${name}.test.js\`)); return i === -1 ? long.length : i; };
    return rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true });
  }`;
}
