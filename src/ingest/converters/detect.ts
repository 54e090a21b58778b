import { extensionOf } from './names.ts';

/** The formats a conversion knows; anything else is stored unchanged as a file node. */
export type SourceFormat = 'pdf' | 'docx' | 'xlsx' | 'csv' | 'tsv' | 'html' | 'image' | 'text' | 'json';

const BY_EXTENSION: Record<string, SourceFormat> = {
  pdf: 'pdf',
  docx: 'docx',
  xlsx: 'xlsx',
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  webp: 'image',
  txt: 'text',
  text: 'text',
  md: 'text',
  markdown: 'text',
  json: 'json',
};

const BY_MIME: Record<string, SourceFormat> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/webp': 'image',
  'text/plain': 'text',
  'text/markdown': 'text',
  'application/json': 'json',
};

/**
 * The format of a source: by its name's extension first (what the person chose), else by the
 * mime type (a fetched page, a name without an extension), else null. A generic mime type
 * (`application/octet-stream`) never decides.
 */
export function detectFormat(name: string, mimeType?: string): SourceFormat | null {
  const byName = BY_EXTENSION[extensionOf(name)];
  if (byName) return byName;
  const mime = mimeType?.split(';')[0]!.trim().toLowerCase();
  return (mime && BY_MIME[mime]) || null;
}

/** Formats whose rows can become JSON; the others only become Markdown. */
export const TABULAR: ReadonlySet<SourceFormat> = new Set(['xlsx', 'csv', 'tsv', 'json']);

/** The extensions read as `format`. */
export function extensionsOf(format: SourceFormat): string[] {
  return Object.keys(BY_EXTENSION).filter((ext) => BY_EXTENSION[ext] === format);
}
