import { gitNameProblem } from '../../../content/paths.ts';

/** Longest name we derive from a title (bytes are checked again by the content store: 255 per name). */
const MAX_NAME_CHARS = 120;

/**
 * A Notion title as one path name: no slashes, control characters or leading dots (which would
 * hide the node or name `.git`/`.trash`), spaces collapsed, at most 120 characters; an empty
 * title is `Untitled`.
 */
export function sanitizeName(title: string): string {
  let s = title
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f/\\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .trim();
  if (Array.from(s).length > MAX_NAME_CHARS) s = Array.from(s).slice(0, MAX_NAME_CHARS).join('').trim();
  s = s.replace(/[. ]+$/, '');
  if (s === '') return 'Untitled';
  return gitNameProblem(s) ? `_${s}` : s;
}

export interface Sibling {
  id: string;
  title: string;
  /** The name it had in the last run, kept while it still fits its title (no node moves for a namesake's sake). */
  previous?: string;
  created?: string;
}

/**
 * Names unique among one parent's children (compared ignoring case, as a client's folder may):
 * the title's name, and for namesakes ` (<first 8 of the id>)` after it. A child keeps the name
 * it had while that still fits its title; new names go oldest first, so the oldest namesake
 * gets the plain name.
 */
export function assignNames(siblings: Sibling[]): Map<string, string> {
  const namer = new Namer();
  const names = new Map<string, string>();
  for (const s of siblings) if (namer.claim(s.id, s.title, s.previous)) names.set(s.id, s.previous!);
  const rest = siblings.filter((s) => !names.has(s.id)).sort((a, b) => (a.created ?? '').localeCompare(b.created ?? '') || a.id.localeCompare(b.id));
  for (const s of rest) names.set(s.id, namer.name(s.id, s.title));
  return names;
}

/** Names handed out one by one among siblings (ignoring case). */
export class Namer {
  private readonly taken = new Map<string, string>();

  /** Keeps `previous` for `id` when it still fits `title` and no other sibling holds it. */
  claim(id: string, title: string, previous: string | undefined): boolean {
    const base = sanitizeName(title);
    if (!previous || (previous !== base && previous !== suffixed(base, id)) || !this.free(previous, id)) return false;
    this.taken.set(previous.toLowerCase(), id);
    return true;
  }

  /** The title's name, or with the id's suffix when a sibling holds it. */
  name(id: string, title: string): string {
    const base = sanitizeName(title);
    const name = this.free(base, id) ? base : suffixed(base, id);
    this.taken.set(name.toLowerCase(), id);
    return name;
  }

  release(name: string, id: string): void {
    if (this.taken.get(name.toLowerCase()) === id) this.taken.delete(name.toLowerCase());
  }

  private free(name: string, id: string): boolean {
    return (this.taken.get(name.toLowerCase()) ?? id) === id;
  }
}

function suffixed(base: string, id: string): string {
  return `${base} (${shortId(id)})`;
}

export function shortId(id: string): string {
  return id.replace(/-/g, '').slice(0, 8);
}
