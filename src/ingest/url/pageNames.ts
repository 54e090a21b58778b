import { createHash } from 'node:crypto';
import { TRASH_DIR } from '../../content/paths.ts';
import { extensionOf, safeName } from '../converters/names.ts';

/** Extensions a web page's address may carry that say nothing about what the answer is. */
const PAGE_EXTENSIONS = new Set(['html', 'htm', 'xhtml', 'shtml', 'php', 'asp', 'aspx', 'jsp', 'cgi']);

/** The extension a file fetched without one gets from its media type (the converters choose by extension first). */
const BY_MIME: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
};

const decode = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

export interface PagePlace {
  /** Folders below the task's target folder ('' for none), each name safe for the content store. */
  folder: string;
  /** The name the converter is given: it decides the format (by extension) and names the output. */
  sourceName: string;
}

/**
 * Where a fetched page's nodes go: its address's path, as folders and a name (`/docs/intro` →
 * folder `docs`, `intro.md`; `/` and `/docs/` → `index`), under a folder named after the host
 * for pages of another site than the first page's. A query string adds a short hash of itself
 * to the name (`search_1a2b3c4d`), so `?page=2` does not overwrite `?page=1`. HTML is named
 * `.html` whatever its address says; other answers keep their extension or get one from their
 * media type.
 */
export function pagePlace(url: URL, homeOrigin: string, html: boolean, mimeType: string | null): PagePlace {
  const segments = url.pathname.split('/').filter(Boolean).map(decode);
  const last = url.pathname.endsWith('/') || segments.length === 0 ? 'index' : segments.pop()!;
  if (url.origin !== homeOrigin) segments.unshift(url.host);
  const ext = extensionOf(last);
  const stem = ext ? last.slice(0, -(ext.length + 1)) : last;
  const byMime = BY_MIME[mimeType?.split(';')[0]!.trim().toLowerCase() ?? ''];
  let name: string;
  if (html) name = `${PAGE_EXTENSIONS.has(ext) ? stem : last}.html`;
  else if ((!ext || PAGE_EXTENSIONS.has(ext)) && byMime) name = `${stem}.${byMime}`;
  else name = last;
  if (url.search) {
    const hash = createHash('sha256').update(url.search).digest('hex').slice(0, 8);
    const dot = name.lastIndexOf('.');
    name = dot > 0 ? `${name.slice(0, dot)}_${hash}${name.slice(dot)}` : `${name}_${hash}`;
  }
  // `.trash` is where the project's deleted nodes live: a site's folder of that name is not.
  const folder = segments.map((s) => (s === TRASH_DIR ? `_${s}` : safeName(s))).join('/');
  return { folder, sourceName: safeName(name) };
}

/** `a/b.md` taken: `a/b-2.md`, then `a/b-3.md`, … */
export function uniquePath(path: string, taken: Set<string>): string {
  if (!taken.has(path)) return path;
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const cut = dot > slash + 1 ? dot : path.length;
  for (let n = 2; ; n++) {
    const candidate = `${path.slice(0, cut)}-${n}${path.slice(cut)}`;
    if (!taken.has(candidate)) return candidate;
  }
}
