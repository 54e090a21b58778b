import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface GoogleDocsConfig {
  /** Document ids, in the order given, without repeats. */
  documentIds: string[];
  /** Whether Markdown edits go back to the documents. */
  push: boolean;
}

/** Google's file ids: letters, digits, `-` and `_` (documents' are 44 characters; older files' shorter). */
const ID = /^[A-Za-z0-9_-]{10,}$/;

/**
 * A document id as given: the id itself, or an address naming it — docs.google.com/document/d/<id>/…
 * (with or without /u/<n>/), drive.google.com/file/d/<id>, or …?id=<id>.
 */
export function documentIdFrom(raw: string): string | null {
  const s = raw.trim();
  if (ID.test(s)) return s;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return null;
  }
  const inPath = /\/(?:document|file)\/(?:u\/\d+\/)?d\/([A-Za-z0-9_-]{10,})/.exec(url.pathname);
  if (inPath) return inPath[1];
  const param = url.searchParams.get('id');
  return param && ID.test(param) ? param : null;
}

function list(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

export function googleDocsConfig(config: SyncConfig): GoogleDocsConfig {
  const ids = list(config.document_ids)
    .map(documentIdFrom)
    .filter((d): d is string => d !== null);
  return { documentIds: [...new Set(ids)], push: config.push === true || config.push === 'true' };
}

export function validateGoogleDocsConfig(config: SyncConfig): void {
  const given = list(config.document_ids);
  if (given.length === 0) throw invalidField('document_ids', 'document_ids lists the documents to sync: their ids or docs.google.com addresses');
  const bad = given.find((d) => documentIdFrom(d) === null);
  if (bad !== undefined) throw invalidField('document_ids', `"${bad}" is neither a Google Docs document id nor a docs.google.com/document/d/… address`);
}
