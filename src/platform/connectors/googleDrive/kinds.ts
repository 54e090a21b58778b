import { detectFormat } from '../../../ingest/converters/detect.ts';
import { baseOf, safeName } from '../../../ingest/converters/names.ts';
import { FOLDER, type DriveFile } from './api.ts';

export const GOOGLE_DOC = 'application/vnd.google-apps.document';
export const GOOGLE_SHEET = 'application/vnd.google-apps.spreadsheet';
/**
 * Files larger than this are left out: the runtime reads an answer up to 64 MiB (and stores far
 * less: CNS_MAX_CONTENT_BYTES), so downloading one would fail every run rather than skip one file.
 */
export const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;

/** Google types exported as PDF: what they show is a layout, which a PDF keeps. */
const AS_PDF = new Set(['application/vnd.google-apps.presentation', 'application/vnd.google-apps.drawing']);

/**
 * How a Drive file becomes a node:
 * - a Google Doc is exported as Markdown (`<name>.md`);
 * - a Google Sheet's first sheet is exported as CSV and becomes JSON rows (`<name>.json`);
 * - Slides and Drawings are exported as PDF (`<name>.pdf`), then converted like any PDF;
 * - other Google types (Forms, Sites, My Maps, shortcuts, Apps Script…) have no export that
 *   keeps their content, and are left out;
 * - any other file is downloaded as it is (a `.md` or `.json` file as such a node); with
 *   `convert`, PDFs and DOCX become Markdown and XLSX JSON rows, through the ingestion converters;
 *   one over MAX_DOWNLOAD_BYTES is left out.
 */
export type Kind =
  | { how: 'doc' }
  | { how: 'sheet' }
  | { how: 'pdf-export'; convert: boolean }
  | { how: 'download'; convert: 'markdown' | 'json' | null };

export function kindOf(file: Pick<DriveFile, 'mimeType' | 'name' | 'size'>, convert: boolean): Kind | null {
  const mime = file.mimeType;
  if (mime === FOLDER) return null;
  if (mime === GOOGLE_DOC) return { how: 'doc' };
  if (mime === GOOGLE_SHEET) return { how: 'sheet' };
  if (AS_PDF.has(mime)) return { how: 'pdf-export', convert };
  if (mime.startsWith('application/vnd.google-apps.')) return null;
  if (Number(file.size ?? 0) > MAX_DOWNLOAD_BYTES) return null;
  return { how: 'download', convert: convert ? convertTarget(file) : null };
}

/** Whether `convert` changes what the file becomes (turning it on or off makes it again). */
export function convertible(file: Pick<DriveFile, 'mimeType' | 'name'>): boolean {
  const kind = kindOf(file, true);
  return kind?.how === 'pdf-export' || (kind?.how === 'download' && kind.convert !== null);
}

/** What the ingestion converters make of a downloaded file, when `convert` is on. */
function convertTarget(file: Pick<DriveFile, 'mimeType' | 'name'>): 'markdown' | 'json' | null {
  const format = detectFormat(file.name, file.mimeType);
  if (format === 'pdf' || format === 'docx') return 'markdown';
  if (format === 'xlsx') return 'json';
  return null;
}

/** The node's name in its folder: Drive's name made safe, with the extension of what it becomes. */
export function nodeName(file: Pick<DriveFile, 'name'>, kind: Kind): string {
  switch (kind.how) {
    case 'doc':
      return withExtension(file.name, 'md');
    case 'sheet':
      return withExtension(file.name, 'json');
    case 'pdf-export':
      return kind.convert ? withExtension(file.name, 'md') : withExtension(file.name, 'pdf');
    case 'download':
      if (kind.convert === 'markdown') return safeName(`${baseOf(file.name)}.md`);
      if (kind.convert === 'json') return safeName(`${baseOf(file.name)}.json`);
      return safeName(file.name);
  }
}

/** `name.ext`, unless the name already ends so (a Doc called "notes.md"). */
function withExtension(name: string, ext: string): string {
  return safeName(name.toLowerCase().endsWith(`.${ext}`) ? name : `${name}.${ext}`);
}

/**
 * The file's version: its content checksum when Drive has one (binary files: a rename or a
 * move leaves it unchanged), else its modification time (Google files, whose `version` also
 * moves with metadata-only changes such as sharing), else `version`.
 */
export function versionOf(file: DriveFile): string {
  if (file.md5Checksum) return `md5:${file.md5Checksum}`;
  if (file.modifiedTime) return `mtime:${file.modifiedTime}`;
  return `v:${file.version ?? '0'}`;
}
