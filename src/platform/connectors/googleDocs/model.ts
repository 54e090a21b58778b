/**
 * The meaning of a Markdown block as far as a Google document can hold it: what the renderer
 * builds from the document and the parser reads back from edited Markdown. Two blocks with the
 * same key are the same content, however their Markdown was spelled (`*` or `_`, `-` or `+`,
 * the numbers of an ordered list, line wrapping), so only blocks whose meaning changed are sent.
 */

/** A piece of a paragraph with one style. `\u000b` in `text` is a line break inside the paragraph. */
export interface Run {
  text: string;
  bold?: true;
  italic?: true;
  strike?: true;
  link?: string;
  /** An image: its alternative text (`text` is empty). */
  image?: string;
  /** The image's address (not part of the meaning: Google hands out a new one at every read). */
  src?: string;
  /** Written as is, not escaped (a footnote mark `[^1]`). */
  raw?: true;
}

export interface ListInfo {
  ordered: boolean;
  /** 0 for a top-level item. */
  depth: number;
}

export interface ParagraphBlock {
  kind: 'paragraph';
  /** 0: body text; 1-6: heading level (a title is a level 1, a subtitle a level 2). */
  level: number;
  list: ListInfo | null;
  runs: Run[];
}

/** A block this sync does not write (a table, a rule, a code block, a quote…), by what it holds. */
export interface OtherBlock {
  kind: 'other';
  /** How a refusal names it. */
  what: string;
  key: string;
}

export type BlockModel = ParagraphBlock | OtherBlock;

const styled = (r: Run) => !!(r.bold || r.italic || r.strike);
const sameStyle = (a: Run, b: Run) => !!a.bold === !!b.bold && !!a.italic === !!b.italic && !!a.strike === !!b.strike && (a.link ?? null) === (b.link ?? null);

/**
 * Runs as Markdown can hold them: emphasis never starts or ends on white space (`** a**` is not
 * bold), so white space at the edges of an emphasized run goes outside it; the paragraph's own
 * leading and trailing white space goes (Markdown drops it); neighbours of one style merge.
 */
export function canonicalRuns(input: Run[]): Run[] {
  const split: Run[] = [];
  for (const r of input) {
    if (r.image !== undefined) {
      split.push(r);
      continue;
    }
    if (r.text === '') continue;
    if (!styled(r) || r.raw) {
      split.push({ ...r });
      continue;
    }
    const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(r.text)!;
    const plain: Run = r.link ? { text: '', link: r.link } : { text: '' };
    if (m[1]) split.push({ ...plain, text: m[1] });
    if (m[2]) split.push({ ...r, text: m[2] });
    if (m[3]) split.push({ ...plain, text: m[3] });
  }
  while (split.length && split[0].image === undefined && !split[0].raw && /^\s*$/.test(split[0].text)) split.shift();
  while (split.length && split.at(-1)!.image === undefined && !split.at(-1)!.raw && /^\s*$/.test(split.at(-1)!.text)) split.pop();
  if (split.length && split[0].image === undefined && !split[0].raw) split[0] = { ...split[0], text: split[0].text.replace(/^\s+/, '') };
  const last = split.length - 1;
  if (last >= 0 && split[last].image === undefined && !split[last].raw) split[last] = { ...split[last], text: split[last].text.replace(/\s+$/, '') };
  const out: Run[] = [];
  for (const r of split) {
    const prev = out.at(-1);
    if (prev && prev.image === undefined && r.image === undefined && !!prev.raw === !!r.raw && sameStyle(prev, r)) prev.text += r.text;
    else out.push({ ...r });
  }
  return out;
}

/** The runs' meaning: text and style, raw or not merged, image addresses left out. */
export function runsKey(runs: Run[]): unknown[] {
  const out: unknown[][] = [];
  for (const r of runs) {
    if (r.image !== undefined) {
      out.push(['img', r.image]);
      continue;
    }
    const style = [r.bold ? 1 : 0, r.italic ? 1 : 0, r.strike ? 1 : 0, r.link ?? null];
    const prev = out.at(-1);
    if (prev && prev[0] !== 'img' && JSON.stringify(prev.slice(1)) === JSON.stringify(style)) prev[0] = `${prev[0] as string}${r.text}`;
    else out.push([r.text, ...style]);
  }
  return out;
}

export function blockKey(b: BlockModel): string {
  if (b.kind === 'other') return b.key;
  return JSON.stringify(['p', b.level, b.list ? [b.list.ordered, b.list.depth] : null, runsKey(b.runs)]);
}

/** A paragraph's text as Google holds it (line breaks as `\u000b`). */
export const runsText = (runs: Run[]): string => runs.map((r) => r.text).join('');

/** Whether the sync can write the paragraph: text only (an image cannot be uploaded from here). */
export const writable = (b: BlockModel): b is ParagraphBlock => b.kind === 'paragraph' && b.runs.every((r) => r.image === undefined && !r.raw);
