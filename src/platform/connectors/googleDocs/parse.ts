import { Lexer, type Token, type Tokens } from 'marked';
import { blockKey, canonicalRuns, runsKey, type BlockModel, type Run } from './model.ts';

type Style = Pick<Run, 'bold' | 'italic' | 'strike' | 'link'>;

/**
 * Edited Markdown back to blocks (over `marked`'s lexer, GitHub-flavoured): the reverse of
 * render.ts. Every heading, paragraph and list item is a paragraph block; tables, rules, code,
 * quotes and HTML are other blocks, compared by what they hold.
 */
export function parseMarkdown(markdown: string): BlockModel[] {
  const out: BlockModel[] = [];
  for (const t of new Lexer({ gfm: true }).lex(markdown)) blocksOf(t, out);
  return out;
}

/** The keys of `parseMarkdown`'s blocks. */
export const keysOf = (blocks: BlockModel[]): string[] => blocks.map(blockKey);

function blocksOf(t: Token, out: BlockModel[]): void {
  switch (t.type) {
    case 'space':
      return;
    case 'heading':
      out.push({ kind: 'paragraph', level: (t as Tokens.Heading).depth, list: null, runs: runsOf((t as Tokens.Heading).tokens) });
      return;
    case 'paragraph':
      out.push({ kind: 'paragraph', level: 0, list: null, runs: runsOf((t as Tokens.Paragraph).tokens) });
      return;
    case 'list':
      listItems(t as Tokens.List, 0, out);
      return;
    case 'table': {
      const table = t as Tokens.Table;
      const rows = [table.header, ...table.rows].map((r) => r.map((c) => runsKey(runsOf(c.tokens))));
      out.push({ kind: 'other', what: 'a table', key: JSON.stringify(['table', rows]) });
      return;
    }
    case 'hr':
      out.push({ kind: 'other', what: 'a horizontal rule', key: 'hr' });
      return;
    case 'code':
      out.push({ kind: 'other', what: 'a code block', key: `code:${(t as Tokens.Code).text}` });
      return;
    case 'blockquote':
      out.push({ kind: 'other', what: 'a quote', key: `quote:${(t as Tokens.Blockquote).text}` });
      return;
    case 'html':
      out.push({ kind: 'other', what: 'HTML', key: `html:${t.raw.trim()}` });
      return;
    default:
      out.push({ kind: 'other', what: `Markdown (${t.type})`, key: `${t.type}:${t.raw.trim()}` });
  }
}

/** Each item is one paragraph at its depth; its nested lists follow it one level deeper. */
function listItems(list: Tokens.List, depth: number, out: BlockModel[]): void {
  for (const item of list.items) {
    let first = true;
    for (const t of item.tokens) {
      if (t.type === 'list') {
        listItems(t as Tokens.List, depth + 1, out);
      } else if (first && (t.type === 'text' || t.type === 'paragraph')) {
        const tokens = (t as Tokens.Text).tokens ?? [{ type: 'text', raw: (t as Tokens.Text).text, text: (t as Tokens.Text).text } as Tokens.Text];
        out.push({ kind: 'paragraph', level: 0, list: { ordered: list.ordered, depth }, runs: runsOf(tokens) });
        first = false;
      } else if (t.type !== 'space' && t.type !== 'checkbox') {
        // A second paragraph, a code block… inside an item: a Google list item is one paragraph.
        out.push({ kind: 'other', what: 'a list item of several blocks', key: `item:${t.raw.trim()}` });
      }
    }
    if (first) out.push({ kind: 'paragraph', level: 0, list: { ordered: list.ordered, depth }, runs: [] });
  }
}

function runsOf(tokens: Token[] | undefined): Run[] {
  const runs: Run[] = [];
  inline(tokens ?? [], {}, runs);
  return canonicalRuns(runs);
}

function inline(tokens: Token[], style: Style, out: Run[]): void {
  for (const t of tokens) {
    switch (t.type) {
      case 'text': {
        const nested = (t as Tokens.Text).tokens;
        if (nested && nested.length) inline(nested, style, out);
        // A line break in the source is a space (soft wrap).
        else out.push({ ...style, text: (t as Tokens.Text).text.replace(/\n/g, ' ') });
        break;
      }
      case 'escape':
        out.push({ ...style, text: (t as Tokens.Escape).text });
        break;
      case 'strong':
        inline((t as Tokens.Strong).tokens, { ...style, bold: true }, out);
        break;
      case 'em':
        inline((t as Tokens.Em).tokens, { ...style, italic: true }, out);
        break;
      case 'del':
        inline((t as Tokens.Del).tokens, { ...style, strike: true }, out);
        break;
      case 'link':
        inline((t as Tokens.Link).tokens, { ...style, link: (t as Tokens.Link).href }, out);
        break;
      case 'image':
        out.push({ text: '', image: (t as Tokens.Image).text, src: (t as Tokens.Image).href });
        break;
      case 'br':
        out.push({ ...style, text: '\u000b' });
        break;
      case 'codespan':
        // Google Docs has no code style: the backticks stay as text.
        out.push({ ...style, text: `\`${(t as Tokens.Codespan).text}\`` });
        break;
      case 'html':
        out.push({ ...style, text: /^<br\s*\/?>$/i.test(t.raw.trim()) ? '\u000b' : t.raw });
        break;
      case 'checkbox':
        break;
      default:
        out.push({ ...style, text: t.raw });
    }
  }
}
