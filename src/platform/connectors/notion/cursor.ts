/**
 * The cursor of a Notion sync: the newest `last_edited_time` seen among pages and per
 * database (each with the folder its rows fill: a renamed database means a full listing of it),
 * and when the last reconciling listing ran.
 */
export interface NotionCursor {
  v: 1;
  pages: string | null;
  dbs: Record<string, { since: string | null; folder: string }>;
  reconciled: string | null;
}

export function parseNotionCursor(cursor: string | null): NotionCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<NotionCursor>;
    if (c.v !== 1 || typeof c.dbs !== 'object' || c.dbs === null) return null;
    const time = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? v : null);
    const dbs: NotionCursor['dbs'] = {};
    for (const [id, d] of Object.entries(c.dbs)) if (d && typeof d.folder === 'string') dbs[id] = { since: time(d.since), folder: d.folder };
    return { v: 1, pages: time(c.pages), dbs, reconciled: time(c.reconciled) };
  } catch {
    // An unreadable cursor means a full pull, never a failed sync.
    return null;
  }
}

export function serializeNotionCursor(c: NotionCursor): string {
  return JSON.stringify(c);
}

/** The later of two ISO times (either may be missing). */
export function later(a: string | null, b: string | null): string | null {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
