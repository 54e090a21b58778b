import { notionUrl, type RichText } from './types.ts';

/** Where a Notion page or database is in the project, as a relative link from the page being written; null if not synced. */
export type LinkResolver = (notionId: string) => string | null;

interface Run {
  text: string;
  bold: boolean;
  italic: boolean;
  strike: boolean;
  code: boolean;
  link: string | null;
  equation: boolean;
}

/**
 * Notion rich text as inline Markdown: bold, italic, strikethrough, code and links as their
 * Markdown marks (underline and colors have none), mentions of synced pages as links to their
 * node, inline equations as `$…$`. Text is escaped so that pushing the Markdown back gives the
 * same text (see markdownToBlocks.ts for the reverse).
 */
export function richTextToMarkdown(rich: RichText[] | undefined, links: LinkResolver = () => null): string {
  const runs = merge((rich ?? []).map((r) => toRun(r, links)));
  return runs.map(renderRun).join('');
}

function toRun(r: RichText, links: LinkResolver): Run {
  const a = r.annotations ?? {};
  const run: Run = { text: r.plain_text, bold: !!a.bold, italic: !!a.italic, strike: !!a.strikethrough, code: !!a.code, link: null, equation: false };
  if (r.type === 'equation') return { ...run, text: r.equation?.expression ?? r.plain_text, equation: true };
  if (r.type === 'mention') {
    const target = r.mention?.page?.id ?? r.mention?.database?.id;
    if (target) return { ...run, link: links(target) ?? r.href ?? notionUrl(target) };
    return { ...run, link: r.mention?.type === 'link_preview' ? r.href : null };
  }
  return { ...run, link: r.text?.link?.url ?? r.href ?? null };
}

/** Neighbours with the same marks become one run, so `**a****b**` is written `**ab**`. */
function merge(runs: Run[]): Run[] {
  const out: Run[] = [];
  for (const r of runs) {
    const last = out.at(-1);
    if (last && !last.equation && !r.equation && sameMarks(last, r)) last.text += r.text;
    else out.push({ ...r });
  }
  return out;
}

function sameMarks(a: Run, b: Run): boolean {
  return a.bold === b.bold && a.italic === b.italic && a.strike === b.strike && a.code === b.code && a.link === b.link;
}

function renderRun(r: Run): string {
  if (r.text === '') return '';
  if (r.equation) return `$${r.text}$`;
  // Marks cannot open or close on a space: keep the spaces outside them.
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(r.text)!;
  const [, lead, core, trail] = m;
  if (core === '') return r.link ? `[${escapeText(r.text)}](${linkTarget(r.link)})` : escapeText(r.text);
  let s = r.code ? codeSpan(core) : escapeText(core);
  if (r.strike) s = `~~${s}~~`;
  if (r.italic) s = `*${s}*`;
  if (r.bold) s = `**${s}**`;
  if (r.link) return `[${escapeText(lead)}${s}${escapeText(trail)}](${linkTarget(r.link)})`;
  return `${escapeText(lead)}${s}${escapeText(trail)}`;
}

function codeSpan(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((f) => f.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** A link destination Markdown reads back as written (spaces and parentheses would end it). */
export function linkTarget(url: string): string {
  return /[\s()<>]/.test(url) ? `<${url.replace(/[<>]/g, (c) => encodeURIComponent(c))}>` : url;
}

/**
 * Escapes what Markdown would read as syntax inside running text. Underscores inside a word
 * stay (GFM does not read them as emphasis), and `$` only when two could pair as an equation.
 */
export function escapeText(text: string): string {
  let s = text.replace(/[\\`*[\]<~]/g, (c) => `\\${c}`);
  s = s.replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_');
  s = s.replace(/&(?=#?\w+;)/g, '\\&');
  if ((s.match(/\$/g) ?? []).length > 1) s = s.replace(/\$/g, '\\$');
  return s;
}

/** Escapes what would start a block (heading, list, quote, rule…) at the start of each line of `text`. */
export function escapeLineStarts(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      line
        .replace(/^(\s*)([#>+=|]|-(?=\s|-|$))/, '$1\\$2')
        .replace(/^(\s*\d+)([.)])(?=\s|$)/, '$1\\$2'),
    )
    .join('\n');
}
