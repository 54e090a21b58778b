import { Lexer, type Token, type Tokens } from 'marked';

/** A block to create, in the shape `PATCH /v1/blocks/{id}/children` takes (children apart). */
export interface NewBlock {
  type: string;
  data: Record<string, unknown>;
  children: NewBlock[];
}

/** The page's new content in order: blocks to create, and existing blocks kept where they are. */
export type PageItem = { kind: 'block'; block: NewBlock } | { kind: 'anchor'; blockId: string };

export interface MarkdownToBlocksOptions {
  /**
   * The existing block a paragraph made of one link stands for (a child page or database,
   * written as a link to its node): it stays at the source rather than being re-created.
   */
  anchorFor?: (href: string) => string | null;
  /** The Notion page a link points at (a link to a synced page's node): it goes back as a mention of the page. */
  pageFor?: (href: string) => string | null;
}

/** What one Notion text object may hold (its API limit). */
const MAX_TEXT = 2000;

/**
 * Markdown back to Notion blocks: the reverse of blocksToMarkdown.ts, over `marked`'s lexer.
 * Headings 4-6 become heading_3 (Notion has three levels); raw HTML other than the
 * `<details>` of a toggle stays as text.
 */
export function markdownToBlocks(markdown: string, options: MarkdownToBlocksOptions = {}): PageItem[] {
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  const items: PageItem[] = [];
  pageLinks = options.pageFor ?? null;
  let built: Built[];
  try {
    built = blocksOf(tokens);
  } finally {
    pageLinks = null;
  }
  for (const b of built) {
    const anchor = anchorOf(b, options);
    items.push(anchor ? { kind: 'anchor', blockId: anchor } : { kind: 'block', block: b.block });
  }
  return items;
}

/** The `pageFor` of the conversion under way (conversions are synchronous: one at a time). */
let pageLinks: ((href: string) => string | null) | null = null;

interface Built {
  block: NewBlock;
  /** The link of a paragraph that is only a link (for anchors). */
  soleLink?: string;
}

function anchorOf(b: Built, options: MarkdownToBlocksOptions): string | null {
  return b.soleLink && options.anchorFor ? options.anchorFor(b.soleLink) : null;
}

function blocksOf(tokens: Token[]): Built[] {
  const out: Built[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    // A toggle: `<details><summary>…</summary>` … `</details>` around ordinary Markdown.
    if (t.type === 'html' && /^\s*<details>/i.test(t.raw)) {
      const end = findDetailsEnd(tokens, i);
      if (end > i) {
        out.push({ block: toggle(t.raw, tokens.slice(i + 1, end)) });
        i = end;
        continue;
      }
    }
    out.push(...blockOf(t));
  }
  return out;
}

function findDetailsEnd(tokens: Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type !== 'html') continue;
    depth += (t.raw.match(/<details>/gi) ?? []).length - (t.raw.match(/<\/details>/gi) ?? []).length;
    if (depth <= 0 && i > start) return i;
  }
  return -1;
}

function toggle(openRaw: string, inner: Token[]): NewBlock {
  const summary = /<summary>([\s\S]*?)<\/summary>/i.exec(openRaw)?.[1] ?? '';
  const summaryTokens = new Lexer({ gfm: true }).inlineTokens(summary);
  return block('toggle', { rich_text: richText(summaryTokens) }, blocksOf(inner).map((b) => b.block));
}

function block(type: string, data: Record<string, unknown>, children: NewBlock[] = []): NewBlock {
  return { type, data, children };
}

function blockOf(t: Token): Built[] {
  switch (t.type) {
    case 'space':
    case 'def':
      return [];
    case 'heading': {
      const h = t as Tokens.Heading;
      return [{ block: block(`heading_${Math.min(h.depth, 3)}`, { rich_text: richText(h.tokens) }) }];
    }
    case 'paragraph':
      return [paragraph(t as Tokens.Paragraph)];
    case 'text': {
      const x = t as Tokens.Text;
      return [{ block: block('paragraph', { rich_text: richText(x.tokens ?? [{ type: 'text', raw: x.raw, text: x.text } as Tokens.Text]) }) }];
    }
    case 'list':
      return (t as Tokens.List).items.map((item) => ({ block: listItem(t as Tokens.List, item) }));
    case 'code': {
      const c = t as Tokens.Code;
      return [{ block: block('code', { rich_text: plain(c.text), language: notionLanguage(c.lang) }) }];
    }
    case 'blockquote':
      return [{ block: quote(t as Tokens.Blockquote) }];
    case 'hr':
      return [{ block: block('divider', {}) }];
    case 'table':
      return [{ block: table(t as Tokens.Table) }];
    case 'html':
      return t.raw.trim() === '' || /^\s*<!--[\s\S]*-->\s*$/.test(t.raw) ? [] : [{ block: block('paragraph', { rich_text: plain(t.raw.trim()) }) }];
    default:
      return [{ block: block('paragraph', { rich_text: plain(t.raw.trim()) }) }];
  }
}

function paragraph(p: Tokens.Paragraph): Built {
  const equation = /^\$\$([\s\S]+)\$\$$/.exec(p.text.trim());
  if (equation) return { block: block('equation', { expression: equation[1].trim() }) };
  const only = p.tokens.length === 1 ? p.tokens[0] : null;
  if (only?.type === 'image') {
    const img = only as Tokens.Image;
    return { block: block('image', { type: 'external', external: { url: img.href }, caption: plain(img.text) }) };
  }
  const built: Built = { block: block('paragraph', { rich_text: richText(p.tokens) }) };
  if (only?.type === 'link') built.soleLink = (only as Tokens.Link).href;
  return built;
}

function listItem(list: Tokens.List, item: Tokens.ListItem): NewBlock {
  const tokens = item.tokens.filter((x) => x.type !== 'checkbox');
  const first = tokens[0];
  const lead = first && (first.type === 'text' || first.type === 'paragraph') ? first : null;
  const text = lead ? richText((lead as Tokens.Text).tokens ?? [lead]) : [];
  const children = blocksOf(lead ? tokens.slice(1) : tokens).map((b) => b.block);
  if (item.task) return block('to_do', { rich_text: text, checked: !!item.checked }, children);
  return block(list.ordered ? 'numbered_list_item' : 'bulleted_list_item', { rich_text: text }, children);
}

/** A quote, or a callout when it opens with an emoji (`> 💡 text`, as blocksToMarkdown writes callouts). */
function quote(q: Tokens.Blockquote): NewBlock {
  const inner = q.tokens.filter((x) => x.type !== 'space');
  const first = inner[0];
  const lead = first?.type === 'paragraph' ? (first as Tokens.Paragraph) : null;
  const text = lead ? richText(lead.tokens) : [];
  const children = blocksOf(lead ? inner.slice(1) : inner).map((b) => b.block);
  const emoji = /^(\p{Extended_Pictographic}(?:\uFE0F|\u200D\p{Extended_Pictographic})*)\s/u.exec(lead?.text ?? '');
  if (emoji && text[0]?.type === 'text') {
    const head = text[0] as { text: { content: string } };
    head.text.content = head.text.content.slice(emoji[0].length);
    if (head.text.content === '') text.shift();
    return block('callout', { rich_text: text, icon: { type: 'emoji', emoji: emoji[1] } }, children);
  }
  return block('quote', { rich_text: text }, children);
}

function table(t: Tokens.Table): NewBlock {
  const row = (cells: Tokens.TableCell[]) => block('table_row', { cells: cells.map((c) => richText(c.tokens)) });
  return block('table', { table_width: t.header.length, has_column_header: true, has_row_header: false }, [row(t.header), ...t.rows.map(row)]);
}

interface Marks {
  bold: boolean;
  italic: boolean;
  strikethrough: boolean;
  code: boolean;
  link: string | null;
}

type RichTextInput =
  | { type: 'text'; text: { content: string; link: { url: string } | null }; annotations: Omit<Marks, 'link'> }
  | { type: 'equation'; equation: { expression: string }; annotations: Omit<Marks, 'link'> }
  | { type: 'mention'; mention: { type: 'page'; page: { id: string } }; annotations: Omit<Marks, 'link'> };

const NO_MARKS: Marks = { bold: false, italic: false, strikethrough: false, code: false, link: null };

function plain(text: string): RichTextInput[] {
  return pieces(text, NO_MARKS);
}

/** Inline tokens as Notion rich text: one text object per run of equal marks, none over 2,000 characters. */
export function richText(tokens: Token[]): RichTextInput[] {
  const out: RichTextInput[] = [];
  walk(tokens, NO_MARKS, out);
  return out;
}

function walk(tokens: Token[], marks: Marks, out: RichTextInput[]): void {
  for (const t of tokens) {
    switch (t.type) {
      case 'strong':
        walk((t as Tokens.Strong).tokens, { ...marks, bold: true }, out);
        break;
      case 'em':
        walk((t as Tokens.Em).tokens, { ...marks, italic: true }, out);
        break;
      case 'del':
        walk((t as Tokens.Del).tokens, { ...marks, strikethrough: true }, out);
        break;
      case 'codespan':
        push(out, (t as Tokens.Codespan).text, { ...marks, code: true });
        break;
      case 'link': {
        const l = t as Tokens.Link;
        const page = pageLinks?.(l.href);
        if (page) out.push({ type: 'mention', mention: { type: 'page', page: { id: page } }, annotations: annotations(marks) });
        else walk(l.tokens, { ...marks, link: linkUrl(l.href) }, out);
        break;
      }
      case 'image': {
        const img = t as Tokens.Image;
        push(out, img.text || img.href, { ...marks, link: linkUrl(img.href) });
        break;
      }
      case 'br':
        push(out, '\n', marks);
        break;
      case 'escape':
        push(out, (t as Tokens.Escape).text, marks);
        break;
      case 'text': {
        const x = t as Tokens.Text;
        if (x.tokens?.length) walk(x.tokens, marks, out);
        else withEquations(decodeEntities(x.text), marks, out);
        break;
      }
      default:
        push(out, t.raw, marks);
    }
  }
}

/** Notion refuses relative or odd link targets; those links stay as plain text. */
function linkUrl(href: string): string | null {
  return /^(https?|mailto):/i.test(href) ? href : null;
}

/** `$…$` (Pandoc's rule: no space inside the dollars, no digit right after) is an inline equation. */
function withEquations(text: string, marks: Marks, out: RichTextInput[]): void {
  const re = /\$(?=\S)([^$\n]*?\S)\$(?!\d)/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    push(out, text.slice(at, m.index), marks);
    out.push({ type: 'equation', equation: { expression: m[1] }, annotations: annotations(marks) });
    at = m.index + m[0].length;
  }
  push(out, text.slice(at), marks);
}

function annotations(m: Marks): Omit<Marks, 'link'> {
  return { bold: m.bold, italic: m.italic, strikethrough: m.strikethrough, code: m.code };
}

function push(out: RichTextInput[], content: string, marks: Marks): void {
  if (content === '') return;
  const last = out.at(-1);
  if (last?.type === 'text' && sameMarks(last, marks) && last.text.content.length + content.length <= MAX_TEXT) {
    last.text.content += content;
    return;
  }
  for (const part of pieces(content, marks)) out.push(part);
}

function pieces(content: string, marks: Marks): RichTextInput[] {
  const out: RichTextInput[] = [];
  const chars = Array.from(content);
  for (let i = 0; i < chars.length; i += MAX_TEXT) {
    out.push({ type: 'text', text: { content: chars.slice(i, i + MAX_TEXT).join(''), link: marks.link ? { url: marks.link } : null }, annotations: annotations(marks) });
  }
  return out;
}

function sameMarks(r: Extract<RichTextInput, { type: 'text' }>, m: Marks): boolean {
  const a = r.annotations;
  return a.bold === m.bold && a.italic === m.italic && a.strikethrough === m.strikethrough && a.code === m.code && (r.text.link?.url ?? null) === m.link;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[e.toLowerCase()] ?? all;
  });
}

/** The languages Notion's code block accepts, by the names Markdown fences use. */
const LANGUAGE_ALIASES: Record<string, string> = {
  js: 'javascript',
  jsx: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  py: 'python',
  rb: 'ruby',
  sh: 'shell',
  zsh: 'shell',
  console: 'shell',
  yml: 'yaml',
  md: 'markdown',
  cs: 'c#',
  csharp: 'c#',
  cpp: 'c++',
  fs: 'f#',
  fsharp: 'f#',
  kt: 'kotlin',
  rs: 'rust',
  golang: 'go',
  objc: 'objective-c',
  'objective-c': 'objective-c',
  text: 'plain text',
  txt: 'plain text',
  plaintext: 'plain text',
  'plain-text': 'plain text',
  vb: 'visual basic',
  'visual-basic': 'visual basic',
  'vb.net': 'vb.net',
  'java/c/c++/c#': 'java/c/c++/c#',
};

const NOTION_LANGUAGES = new Set([
  'abap', 'arduino', 'bash', 'basic', 'c', 'clojure', 'coffeescript', 'c++', 'c#', 'css', 'dart', 'diff', 'docker', 'elixir',
  'elm', 'erlang', 'flow', 'fortran', 'f#', 'gherkin', 'glsl', 'go', 'graphql', 'groovy', 'haskell', 'html', 'java',
  'javascript', 'json', 'julia', 'kotlin', 'latex', 'less', 'lisp', 'livescript', 'lua', 'makefile', 'markdown', 'markup',
  'matlab', 'mermaid', 'nix', 'objective-c', 'ocaml', 'pascal', 'perl', 'php', 'plain text', 'powershell', 'prolog',
  'protobuf', 'python', 'r', 'reason', 'ruby', 'rust', 'sass', 'scala', 'scheme', 'scss', 'shell', 'sql', 'swift',
  'typescript', 'vb.net', 'verilog', 'vhdl', 'visual basic', 'webassembly', 'xml', 'yaml', 'java/c/c++/c#',
]);

function notionLanguage(lang: string | undefined): string {
  const l = (lang ?? '').trim().split(/\s+/)[0].toLowerCase();
  // blocksToMarkdown writes multi-word names with dashes (`plain-text`, `visual-basic`).
  const name = LANGUAGE_ALIASES[l] ?? l.replace(/-/g, ' ');
  return NOTION_LANGUAGES.has(name) ? name : 'plain text';
}
