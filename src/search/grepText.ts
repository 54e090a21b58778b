import { looksLikeText } from '../commands/readSlice.ts';

/** A node larger than this is not scanned by grep (listed in `skipped`): grep is for text, not dumps. */
export const GREP_MAX_SCAN_BYTES = 64 * 1024 * 1024;
/** A text larger than this is not put in the trigram index: grep always reads it (it stays exact, just slower). */
export const GREP_MAX_INDEXED_BYTES = 8 * 1024 * 1024;

/**
 * The text grep scans in a node's stored bytes, or null when grep reads nothing there: Markdown
 * and JSON (as stored, pretty-printed) always, a file when it looks like UTF-8 text. The grep
 * tool and the trigram index (the indexer) both decide with this one function, so what the
 * index holds is exactly what a scan would read.
 */
export function grepTextOf(type: string, bytes: Buffer): string | null {
  if (type === 'file' && !looksLikeText(bytes)) return null;
  return bytes.toString('utf8');
}
