import { createHash } from 'node:crypto';
import type { KnownItem, KnownItems, SourceChange } from '../../runtime/connector.ts';
import type { NotionApi } from './api.ts';
import { Namer } from './names.ts';
import { OVERLAP_MS } from './pages.ts';
import { propertiesToJson } from './properties.ts';
import { normalizeId, pageTitle, type Page } from './types.ts';

/** What the sync keeps of a database row between runs (KnownItem.meta). */
export interface RowMeta {
  kind: 'row';
  db: string;
  title: string;
  name: string;
  edited: string;
}

export function knownRows(known: KnownItems): Map<string, Map<string, KnownItem>> {
  const out = new Map<string, Map<string, KnownItem>>();
  for (const k of known.all()) {
    if (k.meta.kind !== 'row') continue;
    const db = String(k.meta.db);
    const rows = out.get(db) ?? new Map<string, KnownItem>();
    rows.set(k.sourceId, k);
    out.set(db, rows);
  }
  return out;
}

/** A version that changes with the content too: Notion's edit times are rounded to the minute. */
export function contentVersion(edited: string, content: unknown): string {
  const hash = createHash('sha1').update(typeof content === 'string' ? content : JSON.stringify(content)).digest('hex').slice(0, 12);
  return `${edited}#${hash}`;
}

/**
 * Row names handed out as rows arrive (a query streams): the names of known rows are theirs
 * until they change; a row keeps its name while it fits its title.
 */
class RowNamer {
  private readonly namer = new Namer();

  constructor(rows: Iterable<KnownItem>) {
    for (const r of rows) this.namer.claim(r.sourceId, String(r.meta.title ?? ''), r.meta.name as string | undefined);
  }

  name(id: string, title: string, previous: string | undefined): string {
    if (previous && this.namer.claim(id, title, previous)) return previous;
    if (previous) this.namer.release(previous, id);
    return this.namer.name(id, title);
  }

  release(name: string, id: string): void {
    this.namer.release(name, id);
  }
}

export interface DatabasePull {
  /** The newest `last_edited_time` among the rows seen. */
  newest: string | null;
}

/**
 * The rows of one database as JSON nodes in `folder`, page by page of the query: only rows
 * edited since `since` (less the overlap), or every row when `since` is null, in which case
 * known rows the query no longer returns are deleted (Notion's query leaves out archived rows).
 */
export async function* pullDatabase(
  api: NotionApi,
  dbId: string,
  folder: string,
  since: string | null,
  known: Map<string, KnownItem>,
  result: DatabasePull,
): AsyncGenerator<SourceChange[]> {
  const namer = new RowNamer(known.values());
  const seen = new Set<string>();
  const from = since ? new Date(Date.parse(since) - OVERLAP_MS).toISOString() : null;
  for await (const rows of api.queryDatabase(dbId, from)) {
    const changes: SourceChange[] = [];
    for (const row of rows) {
      const change = rowChange(row, dbId, folder, known, namer);
      seen.add(normalizeId(row.id));
      if (!result.newest || Date.parse(row.last_edited_time) > Date.parse(result.newest)) result.newest = row.last_edited_time;
      if (change) changes.push(change);
    }
    if (changes.length) yield changes;
  }
  if (since === null) {
    const gone = [...known.keys()].filter((id) => !seen.has(id));
    if (gone.length) yield gone.map((sourceId) => ({ kind: 'delete', sourceId }));
  }
}

function rowChange(row: Page, dbId: string, folder: string, known: Map<string, KnownItem>, namer: RowNamer): SourceChange | null {
  const id = normalizeId(row.id);
  const k = known.get(id);
  if (row.archived || row.in_trash) {
    if (k) namer.release(String(k.meta.name), id);
    return k ? { kind: 'delete', sourceId: id } : null;
  }
  const title = pageTitle(row);
  const name = namer.name(id, title, k?.meta.name as string | undefined);
  const content = propertiesToJson(row.properties);
  const path = `${folder}/${name}.json`;
  const sourceVersion = contentVersion(row.last_edited_time, content);
  if (k && k.sourceVersion === sourceVersion && k.path === path) return null;
  const meta: RowMeta = { kind: 'row', db: dbId, title, name, edited: row.last_edited_time };
  return { kind: 'upsert', item: { sourceId: id, path, type: 'json', content, sourceVersion, meta: { ...meta } } };
}
