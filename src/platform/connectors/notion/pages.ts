import { posix } from 'node:path';
import type { KnownItem, KnownItems } from '../../runtime/connector.ts';
import type { NotionApi } from './api.ts';
import { assignNames } from './names.ts';
import { normalizeId, pageTitle, type Page } from './types.ts';

/** What the sync keeps of a page between runs (KnownItem.meta). */
export interface PageMeta {
  kind: 'page';
  /** The parent page's id ('' for the root page). */
  parent: string;
  title: string;
  name: string;
  edited: string;
  /** When its blocks were last fetched (ms since the epoch). */
  fetched: number;
  /** Block types Markdown cannot carry back (push refuses the page then). */
  lossy?: string[];
}

/**
 * How far before the newest edit seen an incremental search keeps reading: Notion rounds
 * `last_edited_time` to the minute and its search index lags behind edits by seconds to minutes.
 */
export const OVERLAP_MS = 5 * 60_000;
/**
 * A page fetched less than this after its (minute-rounded) edit time may have been edited again
 * within that same minute, with no visible change of `last_edited_time`: it is fetched again.
 */
const SETTLE_MS = 90_000;

interface WorldPage {
  id: string;
  /** Parent page id; '' for the root; null when its parent is not a page (workspace, database, a vanished block). */
  parent: string | null;
  title: string;
  created: string;
  edited: string;
  listed: boolean;
  /** The block it sits in, when its parent is a block (a column, a toggle). */
  parentBlock?: string;
  known?: KnownItem;
}

/** The pages of the sync as this run sees them: those known from earlier runs, updated by what the listing found. */
export interface PageWorld {
  root: string;
  rootTitle: string;
  pages: Map<string, WorldPage>;
  /** Known pages found archived, in the trash, or no longer shared → the parent they had. */
  removed: Map<string, string>;
  /** The newest `last_edited_time` the listing saw. */
  newest: string | null;
}

export function knownPages(known: KnownItems): Map<string, KnownItem> {
  const out = new Map<string, KnownItem>();
  for (const k of known.all()) if (k.meta.kind === 'page') out.set(k.sourceId, k);
  return out;
}

/**
 * Lists the pages: every page the integration sees (`full`: a first pull or a reconciling run),
 * else only those edited since `since` (less the overlap), newest first, stopping at the first
 * older one. Nothing of a page's content is fetched here.
 */
export async function listPages(api: NotionApi, rootId: string, known: Map<string, KnownItem>, full: boolean, since: string | null): Promise<PageWorld> {
  const pages = new Map<string, WorldPage>();
  for (const k of known.values()) {
    const m = k.meta as unknown as PageMeta;
    pages.set(k.sourceId, { id: k.sourceId, parent: m.parent, title: m.title, created: '', edited: m.edited, listed: false, parentBlock: k.meta.parentBlock as string | undefined, known: k });
  }
  const removed = new Map<string, string>();
  const remove = (id: string) => {
    const k = known.get(id);
    pages.delete(id);
    if (k) removed.set(id, String(k.meta.parent));
  };
  const blockParents = new Map<string, string | null>();
  const floor = since && !full ? Date.parse(since) - OVERLAP_MS : -Infinity;
  let newest: string | null = null;
  const take = async (p: Page) => {
    const id = normalizeId(p.id);
    if (p.archived || p.in_trash) return remove(id);
    const parent = id === rootId ? '' : await parentPage(api, p, known.get(id), blockParents);
    const parentBlock = p.parent.type === 'block_id' ? normalizeId(p.parent.block_id) : undefined;
    pages.set(id, { id, parent, title: pageTitle(p), created: p.created_time, edited: p.last_edited_time, listed: true, parentBlock, known: known.get(id) });
  };

  listing: for await (const batch of api.searchPages()) {
    for (const p of batch) {
      if (Date.parse(p.last_edited_time) < floor) break listing;
      if (!newest || Date.parse(p.last_edited_time) > Date.parse(newest)) newest = p.last_edited_time;
      // Database rows come through their database's query, not as pages.
      if (p.parent.type === 'database_id') continue;
      await take(p);
    }
  }
  // The root itself: asked for directly when the listing did not bring it (the search index may lag).
  if (!pages.get(rootId)?.listed && (full || !known.has(rootId))) {
    const root = await api.page(rootId);
    if (!root || root.archived || root.in_trash) {
      throw new Error(`the Notion page ${rootId} (root_page_id) was not found: it is deleted, or not shared with the integration (its ••• menu → Connections)`);
    }
    await take(root);
  }
  if (full) {
    // A known page the full listing did not bring may be gone, or only late in the search index: ask.
    for (const id of known.keys()) {
      if (pages.get(id)?.listed || removed.has(id)) continue;
      const p = await api.page(id);
      if (p) await take(p);
      else remove(id);
    }
  }
  return { root: rootId, rootTitle: pages.get(rootId)?.title ?? '', pages, removed, newest };
}

/**
 * The page a page sits in. A page inside a column, toggle or synced block has a block parent:
 * climb the blocks to their page (once per block per run; a known page that has not moved keeps
 * its parent without asking).
 */
async function parentPage(api: NotionApi, p: Page, known: KnownItem | undefined, cache: Map<string, string | null>): Promise<string | null> {
  if (p.parent.type === 'page_id') return normalizeId(p.parent.page_id);
  if (p.parent.type !== 'block_id') return null;
  const blockId = normalizeId(p.parent.block_id);
  if (known && known.meta.parentBlock === blockId) return String(known.meta.parent);
  let current: string = blockId;
  const climbed: string[] = [];
  for (let depth = 0; depth < 16; depth++) {
    if (cache.has(current)) return remember(cache.get(current) ?? null);
    climbed.push(current);
    const b = await api.block(current);
    if (!b?.parent || b.archived || b.in_trash) return remember(null);
    if (b.parent.type === 'page_id') return remember(normalizeId(b.parent.page_id));
    if (b.parent.type !== 'block_id') return remember(null);
    current = normalizeId(b.parent.block_id);
  }
  return remember(null);

  function remember(page: string | null): string | null {
    for (const c of climbed) cache.set(c, page);
    return page;
  }
}

export interface PlannedPage {
  id: string;
  path: string;
  meta: Omit<PageMeta, 'fetched' | 'lossy'> & { parentBlock?: string };
}

export interface PagesPlan {
  deletes: string[];
  /** Pages whose content is fetched and written (new, edited, moved, or linking to a child that moved). */
  fetch: PlannedPage[];
  /** Every page in scope by id → its path (for links between pages). */
  paths: Map<string, string>;
}

/**
 * Which pages are in the sync (the root and its descendants), their paths (`<root name>.md`,
 * a page's children in the folder named like it), which to delete and which to fetch.
 */
export function planPages(world: PageWorld, rootName: string): PagesPlan {
  const scope = new Map<string, boolean>();
  const inScope = (id: string, seen = new Set<string>()): boolean => {
    const cached = scope.get(id);
    if (cached !== undefined) return cached;
    const page = world.pages.get(id);
    let result: boolean;
    if (id === world.root) result = !!page;
    else if (!page || page.parent === null || seen.has(id)) result = false;
    else result = inScope(page.parent, seen.add(id));
    scope.set(id, result);
    return result;
  };
  const members = [...world.pages.values()].filter((p) => inScope(p.id));

  const byParent = new Map<string, WorldPage[]>();
  for (const p of members) {
    if (p.id === world.root) continue;
    const list = byParent.get(p.parent!) ?? [];
    list.push(p);
    byParent.set(p.parent!, list);
  }
  const names = new Map<string, string>([[world.root, rootName]]);
  for (const siblings of byParent.values()) {
    const assigned = assignNames(siblings.map((s) => ({ id: s.id, title: s.title, created: s.created, previous: s.known?.meta.name as string | undefined })));
    for (const [id, name] of assigned) names.set(id, name);
  }
  const folders = new Map<string, string>();
  const folderOf = (id: string): string => {
    let f = folders.get(id);
    if (f === undefined) {
      const p = world.pages.get(id)!;
      f = id === world.root ? rootName : `${folderOf(p.parent!)}/${names.get(id)}`;
      folders.set(id, f);
    }
    return f;
  };
  const paths = new Map(members.map((p) => [p.id, `${folderOf(p.id)}.md`]));

  const deletes = [...world.pages.values()].filter((p) => p.known && !inScope(p.id)).map((p) => p.id);
  deletes.push(...[...world.removed.keys()].filter((id) => !deletes.includes(id)));

  const fetch = new Set<string>();
  for (const p of members) {
    const k = p.known;
    const moved = !k || k.path !== paths.get(p.id);
    const edited = p.listed && k && (k.meta.edited !== p.edited || Number(k.meta.fetched ?? 0) < Date.parse(p.edited) + SETTLE_MS);
    if (moved || edited) fetch.add(p.id);
    // Its parent links to it by path: a new or moved page changes the text of its parent (old and new).
    if (moved && p.id !== world.root) fetch.add(p.parent!);
    if (k && k.meta.parent !== p.parent && typeof k.meta.parent === 'string' && paths.has(k.meta.parent)) fetch.add(k.meta.parent);
  }
  // A deleted page disappears from its parent's links.
  for (const id of deletes) {
    const parent = world.removed.get(id) ?? world.pages.get(id)?.known?.meta.parent;
    if (typeof parent === 'string' && paths.has(parent)) fetch.add(parent);
  }
  return {
    deletes,
    paths,
    fetch: members
      .filter((p) => fetch.has(p.id))
      .map((p) => ({
        id: p.id,
        path: paths.get(p.id)!,
        meta: { kind: 'page', parent: p.parent!, title: p.title, name: names.get(p.id)!, edited: p.edited, ...(p.parentBlock ? { parentBlock: p.parentBlock } : {}) },
      })),
  };
}

/** A Markdown link from the page at `from` to the node at `to` (both project-relative under the sync folder). */
export function relativeLink(from: string, to: string): string {
  const rel = posix.relative(posix.dirname(from), to);
  return rel === '' ? posix.basename(to) : rel;
}
