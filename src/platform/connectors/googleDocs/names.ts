import { gitNameProblem } from '../../../content/paths.ts';

/** Longest name taken from a title (the content store checks bytes again: 255 per name). */
const MAX_NAME_CHARS = 120;

/**
 * A document title as one file name: no slashes, control characters or leading dots (a hidden
 * node, `.git`, `.trash`), spaces collapsed, at most 120 characters; `Untitled document` when empty.
 */
export function sanitizeTitle(title: string): string {
  let s = title
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f/\\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .trim();
  if (Array.from(s).length > MAX_NAME_CHARS) s = Array.from(s).slice(0, MAX_NAME_CHARS).join('').trim();
  s = s.replace(/[. ]+$/, '');
  if (s === '') return 'Untitled document';
  return gitNameProblem(s) ? `_${s}` : s;
}

export interface Named {
  id: string;
  title: string;
  /** The file name it had after the last run: kept while it still fits the title (no move for a namesake's sake). */
  previous?: string;
}

/**
 * `<title>.md` for each document, unique ignoring case (a client's folder may not tell case
 * apart); namesakes get ` (<first 8 of the id>)`. Documents keep their earlier name while it fits
 * their title; the others are named in the order given.
 */
export function fileNames(docs: Named[]): Map<string, string> {
  const taken = new Map<string, string>();
  const names = new Map<string, string>();
  const free = (name: string, id: string) => (taken.get(name.toLowerCase()) ?? id) === id;
  const claim = (id: string, name: string) => {
    taken.set(name.toLowerCase(), id);
    names.set(id, name);
  };
  for (const d of docs) {
    const base = sanitizeTitle(d.title);
    const fits = d.previous === `${base}.md` || d.previous === `${base} (${d.id.slice(0, 8)}).md`;
    if (d.previous && fits && free(d.previous, d.id)) claim(d.id, d.previous);
  }
  for (const d of docs) {
    if (names.has(d.id)) continue;
    const base = sanitizeTitle(d.title);
    claim(d.id, free(`${base}.md`, d.id) ? `${base}.md` : `${base} (${d.id.slice(0, 8)}).md`);
  }
  return names;
}
