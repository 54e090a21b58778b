import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { GmailApi, type MailboxHistory } from './api.ts';
import { gmailConfig } from './config.ts';
import { parseGmailCursor, serializeGmailCursor } from './cursor.ts';
import { messageItems } from './items.ts';
import { ThreadFolders } from './names.ts';

/** Messages per pull page (one commit each), and the attachment bytes a page holds at most before it is committed. */
const PAGE_MESSAGES = 50;
const PAGE_FILE_BYTES = 32 * 1024 * 1024;

/** Search terms relative to today: what they match changes without anything happening in the mailbox. */
const RELATIVE_DATES = /\b(?:newer_than|older_than):/i;

/**
 * A Gmail pull: the messages `query` matches, one Markdown node each, in a folder per thread.
 *
 * What matches is Gmail's to say (its search language cannot be evaluated here), so every run
 * that may have seen a change lists the matching ids (500 per call, no bodies): a message that
 * no longer matches (archived out of a label, trashed, deleted, aged out of `newer_than:`) is
 * deleted here, and one that newly matches is fetched. Which known messages changed (labels:
 * message content never changes in Gmail) comes from the mailbox history since the cursor's
 * history id (users.history.list), so only those are fetched again. A run whose history is
 * empty asks nothing more, unless the query is relative to today.
 *
 * A full sync (no cursor, another query or attachment setting, or a history id Gmail no longer
 * keeps: 404) takes the mailbox's history id first, then fetches every matching message; the
 * source ids are Gmail's message ids, so nodes already here are updated, never duplicated.
 */
export async function* pullGmail(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const cfg = gmailConfig(ctx.config);
  const api = new GmailApi(ctx.http);
  const prev = parseGmailCursor(cursor);
  // Pages before the last keep the cursor the run started from: a run cut short starts over.
  const startCursor = prev ? serializeGmailCursor(prev) : null;

  let history: MailboxHistory | null = null;
  if (prev && prev.query === cfg.query && prev.attachments === cfg.attachments) history = await api.history(prev.historyId);
  if (prev && history && history.records === 0 && !RELATIVE_DATES.test(cfg.query)) {
    if (history.historyId !== prev.historyId) yield { changes: [], cursor: serializeGmailCursor({ ...prev, historyId: history.historyId }) };
    return;
  }
  const full = history === null;
  const historyId = history?.historyId ?? (await api.historyId());
  const labels = await api.labels();
  const matching = await api.matching(cfg.query);

  const attachmentsOf = new Map<string, string[]>();
  let batch: SourceChange[] = [];
  for (const k of ctx.known.all()) {
    if (k.meta.kind === 'attachment') {
      const message = String(k.meta.message);
      if (!cfg.attachments || !matching.has(message)) batch.push({ kind: 'delete', sourceId: k.sourceId });
      else attachmentsOf.set(message, [...(attachmentsOf.get(message) ?? []), k.sourceId]);
    } else if (!matching.has(k.sourceId)) {
      batch.push({ kind: 'delete', sourceId: k.sourceId });
    }
  }

  const folders = new ThreadFolders(ctx.known);
  const itemContext = { api, labels, folders, withFiles: cfg.attachments, known: ctx.known };
  // Gmail lists newest first; oldest first names a new thread's folder after its first message.
  const wanted = [...matching.keys()].reverse().filter((id) => full || !ctx.known.get(id) || history!.touched.has(id));
  let inBatch = 0;
  let fileBytes = 0;
  for (const id of wanted) {
    const message = await api.message(id);
    if (message === null) {
      // Deleted between the listing and now.
      for (const sourceId of [id, ...(attachmentsOf.get(id) ?? [])]) batch.push({ kind: 'delete', sourceId });
      continue;
    }
    for (const item of await messageItems(itemContext, message)) {
      batch.push({ kind: 'upsert', item });
      if (item.type === 'file') fileBytes += (item.content as Buffer).length;
    }
    if (++inBatch >= PAGE_MESSAGES || fileBytes >= PAGE_FILE_BYTES) {
      yield { changes: batch, cursor: startCursor };
      batch = [];
      inBatch = 0;
      fileBytes = 0;
    }
  }
  yield { changes: batch, cursor: serializeGmailCursor({ v: 1, historyId, query: cfg.query, attachments: cfg.attachments }) };
}
