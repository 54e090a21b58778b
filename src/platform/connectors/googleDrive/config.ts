import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface DriveConfig {
  folderId: string;
  /** PDFs and Office files through the ingestion converters (Markdown, JSON rows). */
  convert: boolean;
}

/** Drive ids are letters, digits, `-` and `_` (folders' are 19 to 44 long; shared drives' roots 19). */
const DRIVE_ID = /^[A-Za-z0-9_-]{10,100}$/;

/** An id as given, or the folder's address (`…/drive/folders/<id>`, `…/drive/u/0/folders/<id>?usp=…`, `open?id=<id>`). */
export function folderIdFrom(raw: string): string | null {
  const s = raw.trim();
  if (DRIVE_ID.test(s)) return s;
  try {
    const url = new URL(s);
    const byPath = /\/folders\/([A-Za-z0-9_-]+)/.exec(url.pathname)?.[1];
    const id = byPath ?? url.searchParams.get('id');
    return id && DRIVE_ID.test(id) ? id : null;
  } catch {
    return null;
  }
}

export function driveConfig(config: SyncConfig): DriveConfig {
  return { folderId: folderIdFrom(String(config.folder_id ?? '')) ?? '', convert: config.convert === true || config.convert === 'true' };
}

export function validateDriveConfig(config: SyncConfig): void {
  if (typeof config.folder_id !== 'string' || !folderIdFrom(config.folder_id)) {
    throw invalidField('folder_id', 'folder_id is the id of a Drive folder, or its address (https://drive.google.com/drive/folders/<id>)');
  }
}
