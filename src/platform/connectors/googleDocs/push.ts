import type { ConnectorContext, LocalChange, PushOutcome } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import { DocsApi } from './api.ts';
import { googleDocsConfig } from './config.ts';
import { EditRefused, planEdits } from './edits.ts';
import { blockKey } from './model.ts';
import { parseMarkdown } from './parse.ts';
import { renderDocument } from './render.ts';

/** Google's answers that refuse one document (no access, gone): the other documents still go. */
const REFUSALS = new Set([403, 404]);

type Update = Extract<LocalChange, { kind: 'update' }>;

/**
 * Sends Markdown edits back to their documents (when the sync's `push` is on), each as one
 * minimal documents.batchUpdate (see edits.ts) computed on a fresh read of the document and
 * sent with `writeControl.requiredRevisionId` of that read: a document edited at Google in
 * between refuses the whole batch, and the change is reported as a conflict rather than written
 * at indices that moved. Creating, deleting and renaming documents stay in Google Docs.
 */
export async function pushGoogleDocs(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const cfg = googleDocsConfig(ctx.config);
  const api = new DocsApi(ctx.http, ctx.apiBase);
  const outcomes: PushOutcome[] = [];
  for (const change of changes) {
    try {
      if (!cfg.push) throw new EditRefused('edits are not sent to Google Docs by this sync (its config has push off): set push to true to send them');
      if (change.kind !== 'update') throw new EditRefused(`${change.kind === 'create' ? 'creating' : 'deleting'} documents from here is not supported: do it in Google Docs`);
      if (change.path !== change.known.path) throw new EditRefused('renaming a document here is not sent back: rename it in Google Docs');
      if (change.type !== 'markdown' || typeof change.content !== 'string') throw new EditRefused('a Google document is written as Markdown');
      outcomes.push(await pushDocument(api, change));
    } catch (err) {
      if (err instanceof EditRefused) outcomes.push({ ok: false, message: err.message });
      else if (err instanceof ProviderError && err.status !== null && REFUSALS.has(err.status)) outcomes.push({ ok: false, message: err.message });
      else throw err;
    }
  }
  return outcomes;
}

async function pushDocument(api: DocsApi, change: Update): Promise<PushOutcome> {
  const id = change.sourceId;
  // Batch indices count suggested text too: read the document with suggestions in place.
  const doc = await api.document(id, 'inline');
  if (!doc) throw new EditRefused('the document is gone from Google Docs, or no longer shared with the account');
  if (!doc.revisionId) throw new EditRefused('the account may only read this document (Google gives no revision to write against): ask for edit access');
  if (hasSuggestions(doc.body)) throw new EditRefused('the document has suggestions pending: accept or reject them in Google Docs, then edit here again');
  const rendered = renderDocument(doc);
  if (doc.revisionId !== change.known.sourceVersion && !sameMeaning(change.previous, rendered.blocks.map((b) => b.key))) {
    throw new EditRefused('conflict: the document changed in Google Docs since it was last pulled; the next pull brings that version here, edit it then');
  }
  const requests = planEdits(rendered, parseMarkdown(change.content as string));
  if (requests.length === 0) return { ok: true, sourceId: id, sourceVersion: doc.revisionId };
  const answer = await api.batchUpdate(id, requests, doc.revisionId);
  if (!answer.ok) {
    throw new EditRefused(`conflict: Google Docs refused the edit, nothing was written (the document changed while it was sent, most likely; Google said: ${answer.message}); the next pull brings its new state`);
  }
  // Drive's version moved too: the next pull reads the document once more (same revision: nothing rewritten).
  return { ok: true, sourceId: id, sourceVersion: answer.revisionId ?? `${doc.revisionId}+` };
}

/** Whether Markdown last written by the sync means what the document holds now (its revision moved without a visible change). */
function sameMeaning(previous: unknown, keys: string[]): boolean {
  if (typeof previous !== 'string') return false;
  const before = parseMarkdown(previous).map(blockKey);
  return before.length === keys.length && before.every((k, i) => k === keys[i]);
}

/** Any suggested insertion, deletion or style change in the body (they only appear in the inline view). */
function hasSuggestions(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasSuggestions);
  if (node === null || typeof node !== 'object') return false;
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('suggested') && ((Array.isArray(v) && v.length > 0) || (!Array.isArray(v) && v !== null && typeof v === 'object' && Object.keys(v).length > 0))) return true;
    if (hasSuggestions(v)) return true;
  }
  return false;
}
