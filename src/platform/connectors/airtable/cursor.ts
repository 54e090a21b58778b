/**
 * The cursor of an Airtable sync: per table, the instant its last complete listing started
 * (Airtable's clock), the folder it fills and the config entry that chose it; and when deletions were last swept for.
 */
export interface AirtableCursor {
  v: 1;
  tables: Record<string, TableState>;
  swept_at: string | null;
}

export interface TableState {
  /** The folder its records were written to: a new one (the table was renamed) means a full listing. */
  folder: string;
  /** The config entry that chose the table, so a rename at the source does not lose it. */
  wanted: string | null;
  since: string;
}

/** The only shape a `since` may have: it goes into a formula. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

export function parseCursor(cursor: string | null): AirtableCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<AirtableCursor>;
    if (c.v !== 1 || !c.tables || typeof c.tables !== 'object') return null;
    const tables: Record<string, TableState> = {};
    for (const [id, t] of Object.entries(c.tables)) {
      if (t && typeof t.folder === 'string' && typeof t.since === 'string' && ISO_INSTANT.test(t.since)) tables[id] = { folder: t.folder, wanted: typeof t.wanted === 'string' ? t.wanted : null, since: t.since };
    }
    return { v: 1, tables, swept_at: typeof c.swept_at === 'string' ? c.swept_at : null };
  } catch {
    // An unreadable cursor means a full pull, never a failed sync.
    return null;
  }
}

export function serializeCursor(c: AirtableCursor): string {
  return JSON.stringify(c);
}
