import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { DocsApi } from './api.ts';
import { googleDocsConfig } from './config.ts';
import { fileNames } from './names.ts';
import { renderDocument } from './render.ts';
import { DOCS_MIME_TYPE, type DriveFile } from './types.ts';

/** Changes per pull page (one commit each). */
const PAGE_ITEMS = 25;

/** What the sync keeps with each document's item. */
export interface DocMeta {
  title: string;
}

/**
 * The cursor: Drive's version of each document when it was last read. Kept in the cursor rather
 * than with the items because a read that finds the same revision (after a push, or a change of
 * sharing) writes no item, and the version it saw must still be remembered.
 */
interface DocsCursor {
  v: 1;
  versions: Record<string, string>;
}

function parseCursor(cursor: string | null): DocsCursor {
  try {
    const c = JSON.parse(cursor ?? '') as Partial<DocsCursor>;
    if (c.v === 1 && c.versions && typeof c.versions === 'object') return { v: 1, versions: { ...c.versions } };
  } catch {
    /* none yet, or unreadable: every document is read (an unchanged revision writes nothing) */
  }
  return { v: 1, versions: {} };
}

/**
 * A Google Docs pull: each configured document as `<title>.md`.
 *
 * Which documents changed is asked of Drive, one files.get per document for a few fields
 * (`version` grows with every change of the file, a rename included): the Docs API has nothing
 * cheaper, and its documents.get sends the whole document. A document is read only when its
 * version moved since the last read (or its file name must change). Its source version is the
 * Docs `revisionId` (Drive's version when the account may only read, as Google then gives no
 * revision id), so a read that finds the same revision rewrites nothing. A document that is gone
 * or no longer shared (Drive answers 404 for both), trashed, or taken out of `document_ids` is
 * deleted here. Pages before the last carry the cursor the run started from: a run cut short
 * reads those documents again.
 */
export async function* pullGoogleDocs(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const cfg = googleDocsConfig(ctx.config);
  const api = new DocsApi(ctx.http, ctx.apiBase);
  const seen = parseCursor(cursor);
  const next: DocsCursor = { v: 1, versions: {} };
  let batch: SourceChange[] = [];
  const take = function* (change: SourceChange): Generator<PullPage> {
    batch.push(change);
    if (batch.length >= PAGE_ITEMS) {
      yield { changes: batch, cursor };
      batch = [];
    }
  };

  const configured = new Set(cfg.documentIds);
  for (const k of ctx.known.all()) if (!configured.has(k.sourceId)) yield* take({ kind: 'delete', sourceId: k.sourceId });

  const present: DriveFile[] = [];
  for (const id of cfg.documentIds) {
    const file = await api.file(id);
    if (!file || file.trashed) {
      if (ctx.known.get(id)) yield* take({ kind: 'delete', sourceId: id });
      continue;
    }
    if (file.mimeType && file.mimeType !== DOCS_MIME_TYPE) throw new Error(`google-docs: ${id} is not a Google Docs document (Drive says ${file.mimeType}); take it out of document_ids`);
    present.push(file);
  }

  const names = fileNames(present.map((f) => ({ id: f.id, title: f.name ?? '', previous: ctx.known.get(f.id)?.path })));
  for (const file of present) {
    const known = ctx.known.get(file.id);
    const path = names.get(file.id)!;
    const version = file.version ?? '';
    if (known && version !== '' && seen.versions[file.id] === version && known.path === path) {
      next.versions[file.id] = version;
      continue;
    }
    const doc = await api.document(file.id, 'preview');
    if (!doc) {
      if (known) yield* take({ kind: 'delete', sourceId: file.id });
      continue;
    }
    if (version !== '') next.versions[file.id] = version;
    const meta: DocMeta = { title: doc.title ?? file.name ?? '' };
    yield* take({
      kind: 'upsert',
      item: { sourceId: file.id, path, type: 'markdown', content: renderDocument(doc).markdown, sourceVersion: doc.revisionId ?? `drive-${version}`, meta: { ...meta } },
    });
  }
  const after = JSON.stringify(next);
  if (batch.length || after !== cursor) yield { changes: batch, cursor: after };
}
