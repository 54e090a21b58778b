import { parse } from 'yaml';
import { FRONT_MATTER_OPENING as OPENING } from './frontMatterFence.ts';

export { opensWithFrontMatter } from './frontMatterFence.ts';

/**
 * YAML front matter at the top of a Markdown document (`---` … `---`), as the dashboard's preview
 * and published pages show it: a table of properties above the text. Pure (no Node API): the
 * dashboard imports it too. Malformed front matter is reported, never thrown, so a page with it
 * still renders (the text as it is, with a warning).
 */

export type FrontMatter =
  | { kind: 'none'; body: string }
  | { kind: 'ok'; properties: [string, string][]; title: string | null; body: string }
  /** `raw`: the front matter block as written (shown as text above the body); '' when it is not closed. */
  | { kind: 'invalid'; error: string; raw: string; body: string };

const BLOCK = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
/** Front matter is a header, not a document: larger ones are shown as text. */
const MAX_BYTES = 64 * 1024;

export function frontMatter(text: string): FrontMatter {
  if (!OPENING.test(text)) return { kind: 'none', body: text };
  const m = BLOCK.exec(text);
  if (!m) return { kind: 'invalid', error: 'the front matter is not closed by a line "---"', raw: '', body: text };
  const yaml = m[1] ?? '';
  const body = text.slice(m[0].length);
  const invalid = (error: string): FrontMatter => ({ kind: 'invalid', error, raw: m[0], body });
  if (yaml.length > MAX_BYTES) return invalid(`the front matter is larger than ${MAX_BYTES / 1024} KB`);
  let value: unknown;
  try {
    // Aliases are capped by the parser (a "billion laughs" document fails rather than expands).
    value = parse(yaml, { maxAliasCount: 50, prettyErrors: false });
  } catch (e) {
    return invalid(firstLine((e as Error).message));
  }
  if (value === null || value === undefined) return { kind: 'ok', properties: [], title: null, body };
  if (typeof value !== 'object' || Array.isArray(value)) return invalid('the front matter is not a list of properties (key: value)');
  const properties = Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, display(v)]);
  const t = (value as Record<string, unknown>).title;
  const title = (typeof t === 'string' || typeof t === 'number') && String(t).trim() !== '' ? String(t).trim() : null;
  return { kind: 'ok', properties, title, body };
}

/** A property's value as one line: scalars as written, lists of scalars joined, anything deeper as JSON. */
function display(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) return v.map((x) => String(x ?? '')).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 200);
}
