import { posix } from 'node:path';
import type { ConnectorContext, KnownItem, LocalChange, PushOutcome } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import { NotionApi } from './api.ts';
import { markdownToBlocks, type NewBlock, type PageItem } from './markdownToBlocks.ts';
import { changedProperties, PropertyError, propertiesToJson } from './properties.ts';
import { contentVersion } from './rows.ts';
import { normalizeId, pageTitle, type Block, type Database } from './types.ts';

/** Blocks a page's text cannot re-create: deleting a child page or database block would archive it. */
const KEPT = new Set(['child_page', 'child_database']);
/** Blocks one append request may carry (Notion's limit). */
const APPEND_MAX = 100;
/** Notion's answers that refuse one change (bad value, no access, gone): the other changes still go. */
const REFUSALS = new Set([400, 403, 404, 409, 422]);

class Refused extends Error {}

/**
 * Sends edits back to Notion: a page's Markdown replaces its blocks, a row's JSON updates the
 * properties that changed. Creating and deleting pages or rows, and moving them, stay in Notion.
 */
export async function pushNotion(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const api = new NotionApi(ctx.http);
  const schemas = new Map<string, Database>();
  const outcomes: PushOutcome[] = [];
  for (const change of changes) {
    try {
      if (change.kind !== 'update') throw new Refused(`${change.kind === 'create' ? 'creating' : 'deleting'} Notion pages or rows from here is not supported: do it in Notion`);
      if (change.path !== change.known.path) throw new Refused('moving or renaming a Notion page or row here is not sent back: rename it in Notion');
      if (change.known.meta.kind === 'row') outcomes.push(await pushRow(api, change, schemas));
      else outcomes.push(await pushPage(api, ctx, change));
    } catch (err) {
      if (err instanceof Refused || err instanceof PropertyError) outcomes.push({ ok: false, message: err.message });
      else if (err instanceof ProviderError && err.status !== null && REFUSALS.has(err.status)) outcomes.push({ ok: false, message: err.message });
      else throw err;
    }
  }
  return outcomes;
}

type Update = Extract<LocalChange, { kind: 'update' }>;

async function pushRow(api: NotionApi, change: Update, schemas: Map<string, Database>): Promise<PushOutcome> {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (change.type !== 'json' || !isObject(change.content)) throw new Refused('a Notion row is a JSON object keyed by property name');
  const dbId = String(change.known.meta.db);
  let db = schemas.get(dbId);
  if (!db) {
    db = await api.database(dbId);
    schemas.set(dbId, db);
  }
  const properties = changedProperties(db.properties, change.content, isObject(change.previous) ? change.previous : {});
  if (Object.keys(properties).length === 0) return { ok: true, sourceId: change.sourceId, sourceVersion: change.known.sourceVersion };
  const page = await api.updatePage(change.sourceId, properties);
  const content = propertiesToJson(page.properties);
  return {
    ok: true,
    sourceId: change.sourceId,
    sourceVersion: contentVersion(page.last_edited_time, content),
    meta: { ...change.known.meta, title: pageTitle(page), edited: page.last_edited_time },
  };
}

/**
 * Replaces a page's blocks with its Markdown. Child pages and databases (links in the
 * Markdown) stay where they are, and the new blocks go around them in the Markdown's order:
 * Notion can only insert after a block, so text placed before the first of them goes after the
 * page's old first block (then deleted), or, on a page that starts with one, right after it.
 * New blocks go in before old ones are deleted, so a failure leaves text twice, never none.
 */
async function pushPage(api: NotionApi, ctx: ConnectorContext, change: Update): Promise<PushOutcome> {
  if (change.type !== 'markdown' || typeof change.content !== 'string') throw new Refused('a Notion page is written as Markdown');
  const lossy = change.known.meta.lossy as string[] | undefined;
  if (lossy?.length) throw new Refused(`the page holds ${lossy.join(', ')}, which Markdown cannot carry back: edit it in Notion`);

  const pageId = change.sourceId;
  const current = await api.children(pageId);
  const kept = new Set(current.filter((b) => KEPT.has(b.type)).map((b) => normalizeId(b.id)));
  const byPath = pagePaths(ctx);
  const pageIds = new Set(byPath.values());
  const items = markdownToBlocks(change.content, {
    anchorFor: (href) => {
      const target = linkedId(href, change.known.path, byPath);
      return target && kept.has(target) ? target : null;
    },
    // Only pages the sync knows: a notion.so link may name a block or a database, which a mention cannot.
    pageFor: (href) => {
      const target = linkedId(href, change.known.path, byPath);
      return target && pageIds.has(target) ? target : null;
    },
  });

  const loose = current.filter((b) => !KEPT.has(b.type));
  for (const { after, blocks } of placements(items, current)) await appendTree(api, pageId, blocks, after);
  for (const b of loose) await api.deleteBlock(b.id);

  const page = await api.page(pageId);
  const edited = page?.last_edited_time ?? String(change.known.meta.edited);
  return {
    ok: true,
    sourceId: pageId,
    sourceVersion: contentVersion(edited, change.content),
    // Fetched again by the next pull (fetched 0), which writes the text as Notion now renders it.
    meta: { ...change.known.meta, edited, fetched: 0 },
  };
}

/** Where each run of new blocks goes: after which existing block (undefined: at the end). */
export function placements(items: PageItem[], current: Block[]): { after: string | undefined; blocks: NewBlock[] }[] {
  const segments: { anchor: string | null; blocks: NewBlock[] }[] = [{ anchor: null, blocks: [] }];
  for (const item of items) {
    if (item.kind === 'anchor') segments.push({ anchor: item.blockId, blocks: [] });
    else segments.at(-1)!.blocks.push(item.block);
  }
  const [lead, ...rest] = segments;
  const out: { after: string | undefined; blocks: NewBlock[] }[] = [];
  const hasKept = current.some((b) => KEPT.has(b.type));
  if (lead.blocks.length) {
    if (!hasKept) out.push({ after: undefined, blocks: lead.blocks });
    else if (!KEPT.has(current[0].type)) out.push({ after: current[0].id, blocks: lead.blocks });
    else if (rest.length) rest[0].blocks.unshift(...lead.blocks);
    else out.push({ after: undefined, blocks: lead.blocks });
  }
  for (const s of rest) if (s.blocks.length) out.push({ after: s.anchor!, blocks: s.blocks });
  return out;
}

/**
 * Appends blocks (100 per request, in order). Notion takes two levels of nesting per request:
 * a block whose children have children of their own goes alone, and its children follow under it.
 */
async function appendTree(api: NotionApi, parent: string, blocks: NewBlock[], after: string | undefined): Promise<void> {
  let position = after;
  for (let i = 0; i < blocks.length; i += APPEND_MAX) {
    const chunk = blocks.slice(i, i + APPEND_MAX);
    const deep = chunk.map((b) => b.children.some((c) => c.children.length > 0));
    const created = await api.append(parent, chunk.map((b, j) => wire(b, !deep[j])), position);
    for (let j = 0; j < chunk.length; j++) if (deep[j] && created[j]) await appendTree(api, created[j].id, chunk[j].children, undefined);
    if (position !== undefined) position = created.at(-1)?.id ?? position;
  }
}

function wire(b: NewBlock, withChildren: boolean): Record<string, unknown> {
  const children = withChildren && b.children.length ? { children: b.children.map((c) => wire(c, false)) } : {};
  return { object: 'block', type: b.type, [b.type]: { ...b.data, ...children } };
}

/** Known pages by path (to read links of the Markdown). */
function pagePaths(ctx: ConnectorContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const k of ctx.known.all() as Iterable<KnownItem>) if (k.meta.kind === 'page') out.set(k.path, k.sourceId);
  return out;
}

/** The Notion id a link points at: a page's node (relative to the page written) or a notion.so address. */
function linkedId(href: string, from: string, byPath: Map<string, string>): string | null {
  const notion = /notion\.(?:so|site)\/.*?([0-9a-f]{32})(?:[?#].*)?$/i.exec(href);
  if (notion) return normalizeId(notion[1]);
  let path: string;
  try {
    path = posix.normalize(posix.join(posix.dirname(from), decodeURI(href)));
  } catch {
    return null;
  }
  return byPath.get(path) ?? null;
}
