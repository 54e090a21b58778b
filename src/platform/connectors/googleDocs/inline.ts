import type { Run } from './model.ts';

export interface InlineContext {
  /** How a line break inside the paragraph is written: `\` + newline (then `indent`), or `<br>` (headings, table cells). */
  breaks: 'backslash' | 'html';
  /** What a continuation line starts with (a list item's content column). */
  indent?: string;
  /** A table cell: `|` is escaped. */
  cell?: boolean;
  /** A heading: `#` is escaped (a trailing one would be read as the heading's closing sequence). */
  heading?: boolean;
}

/** Emphasis markers, outermost first. */
const MARKS = [
  ['strike', '~~'],
  ['bold', '**'],
  ['italic', '*'],
] as const;

/**
 * Runs (canonical: see canonicalRuns) as inline Markdown. Emphasis is opened and closed as the
 * style changes from run to run, never around white space; a link is `[…](url)` around its
 * own runs; an image `![alt](address)`.
 */
export function inlineMarkdown(runs: Run[], ctx: InlineContext): string {
  let out = '';
  let i = 0;
  while (i < runs.length) {
    const r = runs[i];
    if (r.image !== undefined) {
      out += `![${escapeText(r.image, ctx)}](${destination(r.src ?? '')})`;
      i++;
      continue;
    }
    let j = i;
    while (j < runs.length && runs[j].image === undefined && (runs[j].link ?? null) === (r.link ?? null)) j++;
    const inner = emphasized(runs.slice(i, j), ctx);
    out += r.link ? `[${inner}](${destination(r.link)})` : inner;
    i = j;
  }
  return escapeLineStarts(out, ctx);
}

function emphasized(runs: Run[], ctx: InlineContext): string {
  let out = '';
  let open: string[] = [];
  let pending = '';
  const flush = () => {
    out += whitespace(pending, ctx);
    pending = '';
  };
  for (const r of runs) {
    if (r.raw) {
      for (const m of [...open].reverse()) out += m;
      open = [];
      flush();
      out += r.text;
      continue;
    }
    const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(r.text)!;
    if (m[2] === '') {
      pending += r.text;
      continue;
    }
    pending += m[1];
    const want: string[] = MARKS.filter(([k]) => r[k]).map(([, mark]) => mark);
    const firstUnwanted = open.findIndex((mark) => !want.includes(mark));
    if (firstUnwanted >= 0) {
      for (let k = open.length - 1; k >= firstUnwanted; k--) out += open[k];
      open = open.slice(0, firstUnwanted);
    }
    flush();
    for (const mark of want) {
      if (open.includes(mark)) continue;
      out += mark;
      open.push(mark);
    }
    out += escapeText(m[2], ctx);
    pending = m[3];
  }
  for (let k = open.length - 1; k >= 0; k--) out += open[k];
  flush();
  return out;
}

/** White space between runs, with line breaks in the paragraph's way. */
function whitespace(s: string, ctx: InlineContext): string {
  return s.replace(/\u000b/g, ctx.breaks === 'html' ? '<br>' : `\\\n${ctx.indent ?? ''}`);
}

/**
 * Characters Markdown would read as syntax, backslash-escaped: emphasis, code, links, HTML, pipes
 * in cells; an `&` that would start an entity; addresses and e-mails GitHub-flavoured Markdown
 * would turn into links by themselves (`https\://`, `www\.`, `\@`).
 */
export function escapeText(s: string, ctx: InlineContext): string {
  let out = s.replace(/[\\`*_[\]<>~]/g, '\\$&');
  if (ctx.cell) out = out.replace(/\|/g, '\\|');
  if (ctx.heading) out = out.replace(/#/g, '\\#');
  out = out
    .replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&')
    .replace(/\b(https?|ftp):\/\//gi, '$1\\://')
    .replace(/\bwww\./gi, (w) => `${w.slice(0, 3)}\\.`)
    .replace(/([A-Za-z0-9._+-])@(?=[A-Za-z0-9-]+\.)/g, '$1\\@');
  return out.replace(/\u000b/g, ctx.breaks === 'html' ? '<br>' : `\\\n${ctx.indent ?? ''}`);
}

/** A line that would open a block (`#`, `-`, `+`, `=`, `1.`) has its first sign escaped. */
function escapeLineStarts(md: string, ctx: InlineContext): string {
  const indent = ctx.indent ?? '';
  return md
    .split('\n')
    .map((line, n) => {
      const lead = n === 0 ? '' : indent;
      if (!line.startsWith(lead)) return line;
      const rest = line.slice(lead.length);
      const fixed = rest.replace(/^([#+\-=])/, '\\$1').replace(/^(\d+)([.)])/, '$1\\$2');
      return lead + fixed;
    })
    .join('\n');
}

/** A link or image address: bare, or in `<…>` when it holds spaces or parentheses. */
function destination(url: string): string {
  return /[\s()<>]/.test(url) ? `<${url.replace(/[<>]/g, (c) => encodeURIComponent(c))}>` : url;
}
