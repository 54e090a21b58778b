/**
 * Checks the fake Notion server against our Notion connector, without the service: a full pull
 * of a generated tree must bring every page with its content, an incremental pull after a few
 * edits exactly the edited pages, and the calls made must be the ones the benchmark's
 * arithmetic assumes (searches + `contentCalls` of the pages fetched). Run it after changing the
 * fake or the connector's use of the API:
 *
 *   node --import=tsx scripts/fakes/notionSelfTest.ts [pages=200]
 */
import assert from 'node:assert/strict';
import { notionConnector } from '../../src/platform/connectors/notion.ts';
import type { KnownItem, KnownItems, SourceChange } from '../../src/platform/runtime/connector.ts';
import { createSourceHttp } from '../../src/platform/runtime/sourceHttp.ts';
import { NOTION_VERSION, startNotionServer } from './notionServer.ts';
import { convert } from '../../src/ingest/converters/index.ts';

const PAGES = Number(process.argv[2] ?? 200);
const TOKEN = 'secret_selftest';

/** What the runtime keeps between runs (sync_items), applied page by page as it commits them. */
class Known implements KnownItems {
  readonly items = new Map<string, KnownItem>();
  get(id: string) {
    return this.items.get(id);
  }
  all() {
    return this.items.values();
  }
  get size() {
    return this.items.size;
  }
  apply(changes: SourceChange[]): void {
    for (const c of changes) {
      if (c.kind === 'delete') this.items.delete(c.sourceId);
      else this.items.set(c.item.sourceId, { sourceId: c.item.sourceId, path: c.item.path, sourceVersion: c.item.sourceVersion, meta: c.item.meta ?? {} });
    }
  }
}

const server = await startNotionServer();
try {
  const ws = server.addWorkspace(TOKEN, 'Self-test workspace');
  // A fan-out smaller than the tree: sections, as the 10,000-page benchmark has.
  const tree = ws.addTree({ title: 'Handbook', pages: PAGES, fanout: 50 });
  // Pages outside the root are listed by the search but never fetched.
  const other = ws.addTree({ title: 'Elsewhere', pages: 3 });

  const known = new Known();
  const counters = { httpCalls: 0, rateLimitedMs: 0 };
  const signal = new AbortController().signal;
  const http = createSourceHttp({
    connector: notionConnector,
    credentials: {
      get: async () => ({ kind: 'token', accessToken: TOKEN, scopes: [], account: null }),
      afterUnauthorized: async () => {
        throw new Error('the fake refused the token');
      },
    },
    projectId: 'prj_selftest',
    apiBase: server.url,
    allowPrivate: true,
    signal,
    counters,
  });
  const ctx = { syncId: 'syn_selftest', projectId: 'prj_selftest', config: { path: 'notion', root_page_id: tree.root.replace(/-/g, '') }, known, http, apiBase: server.url, runMessage: 'self-test', signal, convert };

  const pull = async (cursor: string | null) => {
    counters.httpCalls = 0;
    server.resetStats();
    const changes: SourceChange[] = [];
    let last = cursor;
    for await (const page of notionConnector.pull(ctx, cursor)) {
      known.apply(page.changes);
      changes.push(...page.changes);
      last = page.cursor;
    }
    return { changes, cursor: last, calls: counters.httpCalls, stats: server.stats() };
  };
  const upserted = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'upsert' ? [c.item] : []));

  // 1. The token check a connect makes, and the errors of a wrong token or a missing version.
  const me = await fetch(`${server.url}/v1/users/me`, { headers: { authorization: `Bearer ${TOKEN}`, 'notion-version': NOTION_VERSION } });
  assert.equal(me.status, 200);
  assert.equal(((await me.json()) as { bot: { workspace_name: string } }).bot.workspace_name, 'Self-test workspace');
  const wrong = await fetch(`${server.url}/v1/users/me`, { headers: { authorization: 'Bearer nope', 'notion-version': NOTION_VERSION } });
  assert.equal(wrong.status, 401);
  const versionless = await fetch(`${server.url}/v1/users/me`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(versionless.status, 400);

  // 2. First pull: every page of the tree, once, with its content; nothing outside it.
  const first = await pull(null);
  const items = upserted(first.changes);
  assert.equal(items.length, PAGES, 'every page of the tree');
  assert.deepEqual(new Set(items.map((i) => i.sourceId)), new Set(tree.pages));
  assert.equal(new Set(items.map((i) => i.path)).size, PAGES, 'one path each');
  assert.ok(!items.some((i) => other.pages.includes(i.sourceId)));
  const sizes = items.map((i) => Buffer.byteLength(String(i.content)));
  const leaf = items.find((i) => i.sourceId === tree.leaves[0])!;
  assert.match(String(leaf.content), /^## .+\n\n.*\*\*.+\*\*.*`.+`.*\[the \w+ guide\]\(https:\/\/example\.com\/\w+\)/s, 'a heading, then a paragraph with bold, code and a link');
  assert.match(String(leaf.content), /\n- \[x\] .+\n- \[ \] /, 'to-dos');
  assert.match(String(leaf.content), /```typescript\n/, 'a code block');
  const searches = Math.ceil(ws.pages.size / 100);
  const content = tree.pages.reduce((n, id) => n + ws.contentCalls(id), 0);
  assert.equal(first.calls, searches + content, `a first pull: ${searches} search calls + the blocks calls of every page`);
  assert.equal(first.stats.requests, first.calls, 'the fake saw every call SourceHttp counted');
  assert.deepEqual(first.stats.errors, {});

  // 3. Incremental: three pages edited → those three, one search call and their blocks calls.
  const edited = [tree.leaves[1]!, tree.leaves[Math.floor(tree.leaves.length / 2)]!, tree.pages[1]!];
  for (const id of edited) ws.editPage(id);
  const second = await pull(first.cursor);
  const again = upserted(second.changes);
  assert.deepEqual(new Set(again.map((i) => i.sourceId)), new Set(edited), 'exactly the edited pages');
  assert.equal(second.changes.length, edited.length, 'and nothing deleted');
  for (const item of again) assert.match(String(item.content), /Edited at /);
  const editedCalls = edited.reduce((n, id) => n + ws.contentCalls(id), 0);
  assert.equal(second.calls, 1 + editedCalls, 'one search call + the blocks calls of the edited pages');

  // 4. Unchanged since: no content fetched, still one search call.
  const third = await pull(second.cursor);
  // The pages just edited are read again while their minute-rounded edit time is within 90 s (pages.ts SETTLE_MS).
  assert.ok(upserted(third.changes).every((i) => edited.includes(i.sourceId)));
  assert.equal(third.stats.byRoute['POST /v1/search'], 1);

  console.log(
    `notion fake self-test: ok (${PAGES} pages, ${Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length)} B of Markdown a page on average, ` +
      `first pull ${first.calls} calls, incremental ${second.calls} calls for ${edited.length} edited pages; fake answered in ${first.stats.handlingMs.toFixed(0)} ms total)`,
  );
} finally {
  await server.close();
}
