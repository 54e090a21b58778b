import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { NotionApi } from './api.ts';
import { blocksToMarkdown } from './blocksToMarkdown.ts';
import { notionConfig } from './config.ts';
import { later, parseNotionCursor, serializeNotionCursor, type NotionCursor } from './cursor.ts';
import { assignNames } from './names.ts';
import { knownPages, listPages, planPages, relativeLink, type PageMeta } from './pages.ts';
import { contentVersion, knownRows, pullDatabase } from './rows.ts';
import { normalizeId, plainText, type Database } from './types.ts';

/** Changes per pull page (one commit each). */
const PAGE_ITEMS = 100;

/**
 * A Notion pull: the pages under `root_page_id` as Markdown and the rows of `database_ids` as
 * JSON, at `<root title>.md`, `<root title>/<child title>.md`… and `<database title>/<row title>.json`.
 *
 * Incremental runs read the search (newest edit first) down to the cursor and each database's
 * rows edited since its cursor, and fetch the blocks of changed pages only. Deletions: archived
 * or trashed pages and rows that come back are deleted at once; but a page or row that simply
 * stops being listed (deleted for good, unshared, moved out) never shows up in an incremental
 * listing. Those are found by a reconciling run: a full listing of the search and of each
 * database — listings only, no blocks fetched for unchanged pages, so about one call per 100
 * items — which runs when the last one is older than `reconcile_minutes` (default 60). Time
 * rather than every Nth run keeps its cost the same whatever the sync's interval.
 */
export async function* pullNotion(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const cfg = notionConfig(ctx.config);
  const api = new NotionApi(ctx.http);
  const prev = parseNotionCursor(cursor);
  const now = Date.now();
  const full = !prev?.reconciled || now - Date.parse(prev.reconciled) >= cfg.reconcileMinutes * 60_000;
  const next: NotionCursor = { v: 1, pages: prev?.pages ?? null, dbs: {}, reconciled: full ? new Date(now).toISOString() : prev!.reconciled };
  // Pages before the last carry the cursor the run started from: a run cut short starts over, and
  // what was written already is skipped then (its version is known).
  const startCursor = prev ? serializeNotionCursor(prev) : null;

  const pages = knownPages(ctx.known);
  const rowsByDb = knownRows(ctx.known);
  const databases: Database[] = [];
  for (const id of cfg.databaseIds) databases.push(await api.database(id));
  const root = cfg.rootPageId;
  const world = root ? await listPages(api, root, pages, full || !prev?.pages, prev?.pages ?? null) : null;

  // The root page and the databases share the top level of the sync's folder.
  const top = assignNames([
    ...(world && root ? [{ id: root, title: world.rootTitle, previous: pages.get(root)?.meta.name as string | undefined }] : []),
    ...databases.map((db) => ({ id: normalizeId(db.id), title: plainText(db.title), previous: prev?.dbs[normalizeId(db.id)]?.folder })),
  ]);

  let batch: SourceChange[] = [];
  const take = (changes: SourceChange[]): PullPage | null => {
    batch.push(...changes);
    if (batch.length < PAGE_ITEMS) return null;
    const page = { changes: batch, cursor: startCursor };
    batch = [];
    return page;
  };

  if (world && root) {
    const plan = planPages(world, top.get(root)!);
    const ready = take(plan.deletes.map((sourceId) => ({ kind: 'delete', sourceId })));
    if (ready) yield ready;
    for (const p of plan.fetch) {
      const blocks = await api.blockTree(p.id);
      const links = (target: string) => {
        const to = plan.paths.get(normalizeId(target));
        return to ? relativeLink(p.path, to) : null;
      };
      const { markdown, lossy } = blocksToMarkdown(blocks, links);
      const meta: PageMeta & { parentBlock?: string } = { ...p.meta, fetched: Date.now(), ...(lossy.length ? { lossy } : {}) };
      const page = take([
        { kind: 'upsert', item: { sourceId: p.id, path: p.path, type: 'markdown', content: markdown, sourceVersion: contentVersion(p.meta.edited, markdown), meta: { ...meta } } },
      ]);
      if (page) yield page;
    }
    next.pages = later(prev?.pages ?? null, world.newest);
  } else {
    const ready = take([...pages.keys()].map((sourceId) => ({ kind: 'delete', sourceId })));
    if (ready) yield ready;
  }

  const configured = new Set(databases.map((db) => normalizeId(db.id)));
  for (const [db, rows] of rowsByDb) {
    if (configured.has(db)) continue;
    const ready = take([...rows.keys()].map((sourceId) => ({ kind: 'delete', sourceId })));
    if (ready) yield ready;
  }
  for (const db of databases) {
    const id = normalizeId(db.id);
    const folder = top.get(id)!;
    const before = prev?.dbs[id];
    // A renamed database moves every row: list them all.
    const since = full || !before || before.folder !== folder ? null : before.since;
    const result = { newest: null as string | null };
    for await (const changes of pullDatabase(api, id, folder, since, rowsByDb.get(id) ?? new Map(), result)) {
      const ready = take(changes);
      if (ready) yield ready;
    }
    next.dbs[id] = { since: later(before?.since ?? null, result.newest), folder };
  }

  const after = serializeNotionCursor(next);
  if (batch.length || after !== startCursor) yield { changes: batch, cursor: after };
}
