import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import type { ConnectionRecord } from '../../../src/domain/connections/connectionRecord.ts';
import { Changelog } from '../../../src/events/changelog.ts';
import type { PlatformConnector, PullPage } from '../../../src/platform/runtime/connector.ts';
import { ItemStore } from '../../../src/platform/runtime/itemStore.ts';
import { PlatformRunStore } from '../../../src/platform/runtime/platformRunStore.ts';
import { runSync, SYNC_PAGE_TRAILER } from '../../../src/platform/runtime/runSync.ts';
import { SyncStore } from '../../../src/sync/syncStore.ts';
import { fixture } from '../../content/helpers.ts';
import { ENGINES, metadataOn, type Engine } from '../../helpers/metadataEngines.ts';
import { fakeConnector } from './fakeSource.ts';

// A sync page crosses the line between the two stores (docs/design/postgres.md, "The four writes
// that cross the line"): its content commit first, carrying the page in a trailer, then its items
// and cursor in one metadata transaction. A crash between the two is simulated by making one step
// throw once; the next run completes the page from its journal, without fetching or writing it
// again, and goes on from there. On both engines of the metadata store, with real git.

const SYNC = 'syn_crossing';
const NOW = '2026-01-01T00:00:00.000Z';

/** A source of two pages; every pull is noted with the cursor it was asked from. */
function source() {
  const pages: PullPage[] = [
    {
      cursor: 'p1',
      changes: [
        { kind: 'upsert', item: { sourceId: 'a', path: 'a.md', type: 'markdown', content: '# A\n', sourceVersion: '1' } },
        { kind: 'upsert', item: { sourceId: 'b', path: 'b.md', type: 'markdown', content: '# B\n', sourceVersion: '1' } },
      ],
    },
    { cursor: 'p2/x', changes: [{ kind: 'upsert', item: { sourceId: 'c', path: 'c.md', type: 'markdown', content: '# C\n', sourceVersion: '1' } }] },
  ];
  const asked: (string | null)[] = [];
  const connector: PlatformConnector = {
    ...fakeConnector,
    push: undefined,
    async *pull(_ctx, cursor) {
      asked.push(cursor);
      const from = cursor === null ? 0 : pages.findIndex((p) => p.cursor === cursor) + 1;
      for (const page of pages.slice(from)) yield page;
    },
  };
  return { connector, asked };
}

async function setup(t: ExecutionContext, engine: Engine) {
  const { metadata, close } = await metadataOn(engine);
  t.teardown(close);
  const content = fixture();
  t.teardown(() => content.cleanup());
  await content.store.createProject('prj_1');
  await sql`INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at)
            VALUES (${SYNC}, 'prj_1', 'sync', 'crossing', 'read_write', 'hash', 'cns_', ${NOW}, ${NOW})`.execute(metadata.db);
  const syncs = new SyncStore(metadata);
  await syncs.create({ syncId: SYNC, projectId: 'prj_1', provider: 'github', triggerMode: 'manual' });
  const runs = new PlatformRunStore(metadata, syncs);
  const items = new ItemStore(metadata);
  const changelog = new Changelog(content.store);
  const connection = { id: SYNC, project_id: 'prj_1', kind: 'sync', name: 'crossing', scope_path: 'notes', config: JSON.stringify({ provider: 'github', path: '/notes' }) } as ConnectionRecord;
  const { connector, asked } = source();
  const run = async () => {
    const state = await syncs.require(SYNC);
    const queued = await runs.queueRun(state, 'manual');
    return runSync(
      {
        runs,
        items,
        content: content.store,
        changelog,
        credentials: { get: async () => ({ accessToken: 't' }), afterUnauthorized: async () => ({ accessToken: 't' }) } as never,
        // The write-time policy has its own tests (writeTimePolicy.test.ts): here every write may go.
        grants: { require: () => null as never },
        apiBase: () => 'http://127.0.0.1:9',
        allowPrivate: () => true,
        maxContentBytes: () => 1 << 20,
        convert: null as never,
      },
      { runId: queued.id, state, connection, connector, signal: new AbortController().signal },
    );
  };
  const versions = (path: string) => content.store.listVersions('prj_1', { path }).total;
  return { syncs, runs, items, content: content.store, changelog, run, asked, versions };
}

for (const engine of ENGINES) {
  test(`${engine}: a crash between a page's commit and its metadata: the next run stores the page from its journal, fetches and writes it once, and goes on from its cursor`, async (t) => {
    const s = await setup(t, engine);
    const recordPage = s.runs.recordPage.bind(s.runs);
    let failures = 1;
    s.runs.recordPage = async (...args) => {
      if (failures-- > 0) throw new Error('crashed after the commit');
      return recordPage(...args);
    };

    const first = await s.run();
    t.is(first.error, 'crashed after the commit');
    t.is(s.changelog.latest('prj_1'), 1, 'the first page was committed');
    const [commit] = s.content.commitsAfter('prj_1', 0, 10);
    t.is(await s.content.commitTrailer('prj_1', commit!.commitId, SYNC_PAGE_TRAILER), `${SYNC}/p1`, 'the commit names its page');
    t.like(await s.syncs.require(SYNC), { source_cursor: null });
    t.not((await s.syncs.require(SYNC)).pending_page, null, 'the page is journaled');
    t.is(await s.items.count(SYNC), 0, 'its items were not stored');
    t.deepEqual(s.asked, [null]);

    const second = await s.run();
    t.is(second.error, null);
    t.deepEqual(s.asked, [null, 'p1'], 'the next run pulls after the committed page: it is not fetched again');
    t.is(s.changelog.latest('prj_1'), 2, 'one commit more: the second page only');
    t.is(s.versions('notes/a.md'), 1, 'the first page was not written again');
    t.like(await s.syncs.require(SYNC), { source_cursor: 'p2/x', pending_page: null });
    const rows = await s.items.load(SYNC);
    t.deepEqual([...rows.keys()].sort(), ['a', 'b', 'c']);
    for (const [id, row] of rows) t.is(row.nodeId, s.content.findByPath('prj_1', `notes/${id}.md`)?.id ?? 'missing', `the node of ${id} is found by its path`);
    t.is(second.cursorAfter, 'p2/x');

    // A sync resumes at its cursor: nothing new, nothing fetched again.
    const third = await s.run();
    t.is(third.error, null);
    t.deepEqual(s.asked, [null, 'p1', 'p2/x']);
    t.is(s.changelog.latest('prj_1'), 2);
  });

  test(`${engine}: a crash after a page is journaled but before its commit: the next run drops the journal and pulls the page again, written once`, async (t) => {
    const s = await setup(t, engine);
    const commit = s.content.commit.bind(s.content);
    let failures = 1;
    s.content.commit = async (...args) => {
      if (failures-- > 0) throw new Error('crashed before the commit');
      return commit(...args);
    };

    const first = await s.run();
    t.is(first.error, 'crashed before the commit');
    t.is(s.changelog.latest('prj_1'), 0, 'nothing committed');
    t.not((await s.syncs.require(SYNC)).pending_page, null);

    const second = await s.run();
    t.is(second.error, null);
    t.deepEqual(s.asked, [null, null], 'the page was never stored: pulled again from the same cursor');
    t.is(s.changelog.latest('prj_1'), 2);
    t.is(s.versions('notes/a.md'), 1);
    t.like(await s.syncs.require(SYNC), { source_cursor: 'p2/x', pending_page: null });
    t.is(await s.items.count(SYNC), 3);
  });
}
