/**
 * The cursor of a Gmail sync: the mailbox's history id when the run's view was taken, and the
 * settings that shaped the nodes (another query or attachment setting means a full re-sync).
 */
export interface GmailCursor {
  v: 1;
  historyId: string;
  query: string;
  attachments: boolean;
}

export function parseGmailCursor(cursor: string | null): GmailCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<GmailCursor>;
    if (c.v !== 1 || typeof c.historyId !== 'string' || !/^\d+$/.test(c.historyId) || typeof c.query !== 'string') return null;
    return { v: 1, historyId: c.historyId, query: c.query, attachments: c.attachments === true };
  } catch {
    // An unreadable cursor means a full pull, never a failed sync.
    return null;
  }
}

export const serializeGmailCursor = (c: GmailCursor): string => JSON.stringify(c);
