import { inlineMarkdown } from './inline.ts';
import { blockKey, canonicalRuns, runsKey, type BlockModel, type Run } from './model.ts';
import type { DocsDocument, NamedStyleType, Paragraph, StructuralElement, TextStyle } from './types.ts';

/** One structural element of the body, where it sits (document indices) and what a push may do next to it. */
export interface Seg {
  start: number;
  end: number;
  kind: 'paragraph' | 'table' | 'section' | 'toc';
  /** A paragraph of text runs only, in the body's own style: one the push may rewrite. */
  plain: boolean;
  /** A paragraph with nothing to show (an empty line): it renders no block. */
  empty: boolean;
  style: NamedStyleType;
  bullet: { listId: string; nesting: number } | null;
}

export interface RenderedBlock {
  markdown: string;
  model: BlockModel;
  key: string;
  /** The element it came from (an index into `segs`); null for the footnotes written after the body. */
  seg: number | null;
  /** What separates it from the block before: a blank line, or one line break between items of a list. */
  sep: string;
}

export interface RenderedDocument {
  markdown: string;
  blocks: RenderedBlock[];
  segs: Seg[];
}

const HEADING_LEVEL: Record<string, number> = { TITLE: 1, SUBTITLE: 2, HEADING_1: 1, HEADING_2: 2, HEADING_3: 3, HEADING_4: 4, HEADING_5: 5, HEADING_6: 6 };
const ORDERED_GLYPHS = new Set(['DECIMAL', 'ZERO_DECIMAL', 'UPPER_ALPHA', 'ALPHA', 'UPPER_ROMAN', 'ROMAN']);

interface ListLevel {
  ordered: boolean;
  /** The column its items' content starts at (where a nested list's markers go). */
  col: number;
}

/**
 * A Google document (documents.get) as Markdown: headings (a title `#`, a subtitle `##`),
 * paragraphs with bold, italic, strikethrough and links, bulleted and numbered lists with their
 * nesting (numbers as Google counts them), tables (GitHub-flavoured, paragraphs of a cell joined
 * with `<br>`), images as links to their address, horizontal rules, footnotes (`[^1]`, written
 * after the body), people and smart chips as links or text. Section and page breaks, the table of
 * contents, headers and footers have no Markdown form and are left out; so are underline, colours
 * and fonts. Each block remembers the element it came from, for pushing edits back.
 */
export function renderDocument(doc: DocsDocument): RenderedDocument {
  return new Renderer(doc).run();
}

class Renderer {
  private readonly blocks: RenderedBlock[] = [];
  private readonly segs: Seg[] = [];
  private stack: ListLevel[] = [];
  private readonly counters = new Map<string, number[]>();
  private readonly footnotes: string[] = [];

  constructor(private readonly doc: DocsDocument) {}

  run(): RenderedDocument {
    for (const el of this.doc.body?.content ?? []) this.element(el);
    this.stack = [];
    this.footnotes.forEach((id, i) => this.footnote(id, i + 1));
    const markdown = this.blocks.map((b, i) => (i === 0 ? '' : b.sep) + b.markdown).join('');
    return { markdown: markdown === '' ? '' : `${markdown}\n`, blocks: this.blocks, segs: this.segs };
  }

  private element(el: StructuralElement): void {
    const start = el.startIndex ?? 0;
    const end = el.endIndex ?? start;
    const base = { start, end, plain: false, empty: false, style: 'NORMAL_TEXT' as NamedStyleType, bullet: null };
    if (el.paragraph) return this.paragraph(el.paragraph, { ...base, kind: 'paragraph' });
    if (el.table) {
      this.segs.push({ ...base, kind: 'table' });
      this.stack = [];
      return this.table(el, this.segs.length - 1);
    }
    // A section break or a table of contents shows nothing, but no push may write across it.
    this.segs.push({ ...base, kind: el.tableOfContents ? 'toc' : 'section' });
  }

  private paragraph(p: Paragraph, seg: Seg): void {
    const { runs, plain, rule } = this.inlineOf(p);
    const style = p.paragraphStyle?.namedStyleType ?? 'NORMAL_TEXT';
    const bullet = p.bullet?.listId ? { listId: p.bullet.listId, nesting: p.bullet.nestingLevel ?? 0 } : null;
    const canonical = canonicalRuns(runs);
    const index = this.segs.length;
    // A heading in a list has no Markdown form: shown as a list item, never rewritten.
    this.segs.push({ ...seg, plain: plain && !(bullet && style !== 'NORMAL_TEXT'), empty: plain && canonical.length === 0 && !rule, style, bullet });
    if (canonical.length > 0) {
      if (bullet) this.listItem(canonical, bullet, index);
      else this.textBlock(canonical, HEADING_LEVEL[style] ?? 0, index);
    }
    if (rule) this.push({ markdown: '---', model: { kind: 'other', what: 'a horizontal rule', key: 'hr' }, seg: index, sep: '\n\n' });
  }

  private textBlock(runs: Run[], level: number, seg: number | null): void {
    this.stack = [];
    const markdown = level > 0 ? `${'#'.repeat(level)} ${inlineMarkdown(runs, { breaks: 'html', heading: true })}` : inlineMarkdown(runs, { breaks: 'backslash' });
    this.push({ markdown, model: { kind: 'paragraph', level, list: null, runs }, seg, sep: '\n\n' });
  }

  private listItem(runs: Run[], bullet: { listId: string; nesting: number }, seg: number): void {
    const levels = this.doc.lists?.[bullet.listId]?.listProperties?.nestingLevels ?? [];
    const glyph = levels[bullet.nesting];
    const ordered = ORDERED_GLYPHS.has(glyph?.glyphType ?? '');
    // Google counts per list and level; a shallower item restarts the deeper levels.
    const counts = this.counters.get(bullet.listId) ?? [];
    counts[bullet.nesting] = (counts[bullet.nesting] ?? (glyph?.startNumber ?? 1) - 1) + 1;
    counts.length = bullet.nesting + 1;
    this.counters.set(bullet.listId, counts);
    const number = counts[bullet.nesting];

    const previousWasItem = this.blocks.at(-1)?.model.kind === 'paragraph' && (this.blocks.at(-1)!.model as { list: unknown }).list !== null && this.stack.length > 0;
    if (!previousWasItem) this.stack = [];
    // Markdown nests one level at a time: a deeper jump is shown one level down.
    const depth = Math.min(bullet.nesting, this.stack.length);
    const sibling = this.stack[depth];
    this.stack.length = depth;
    const indent = depth === 0 ? 0 : this.stack[depth - 1].col;
    const marker = ordered ? `${number}. ` : '- ';
    this.stack.push({ ordered, col: indent + marker.length });
    // A numbered list that starts at another number than 1 cannot follow text directly.
    const startsList = !sibling || sibling.ordered !== ordered;
    const sep = previousWasItem && !(ordered && startsList && number !== 1) ? '\n' : '\n\n';
    const markdown = ' '.repeat(indent) + marker + inlineMarkdown(runs, { breaks: 'backslash', indent: ' '.repeat(indent + marker.length) });
    this.push({ markdown, model: { kind: 'paragraph', level: 0, list: { ordered, depth }, runs }, seg, sep });
  }

  private table(el: StructuralElement, seg: number): void {
    const rows = (el.table?.tableRows ?? []).map((row) => (row.tableCells ?? []).map((cell) => this.cellRuns(cell.content ?? [])));
    const columns = Math.max(1, ...rows.map((r) => r.length));
    const padded = rows.map((r) => [...r, ...Array.from({ length: columns - r.length }, () => [] as Run[])]);
    const line = (cells: Run[][]) => `| ${cells.map((c) => inlineMarkdown(c, { breaks: 'html', cell: true })).join(' | ')} |`;
    const lines = padded.map(line);
    lines.splice(1, 0, `| ${Array.from({ length: columns }, () => '---').join(' | ')} |`);
    const key = JSON.stringify(['table', padded.map((r) => r.map(runsKey))]);
    this.push({ markdown: lines.join('\n'), model: { kind: 'other', what: 'a table', key }, seg, sep: '\n\n' });
  }

  /** A cell's paragraphs as one line of runs, paragraphs apart by line breaks. */
  private cellRuns(content: StructuralElement[]): Run[] {
    const runs: Run[] = [];
    for (const el of content) {
      if (!el.paragraph) continue;
      if (runs.length) runs.push({ text: '\u000b' });
      runs.push(...this.inlineOf(el.paragraph).runs);
    }
    return canonicalRuns(runs);
  }

  private footnote(id: string, n: number): void {
    const content = this.doc.footnotes?.[id]?.content ?? [];
    const runs: Run[] = [{ text: `[^${n}]: `, raw: true }, ...this.cellRuns(content)];
    const markdown = inlineMarkdown(canonicalRuns(runs), { breaks: 'backslash', indent: '    ' });
    this.push({ markdown, model: { kind: 'paragraph', level: 0, list: null, runs: canonicalRuns(runs) }, seg: null, sep: '\n\n' });
  }

  /** A paragraph's elements as runs; `plain` when they are text runs with ordinary links only. */
  private inlineOf(p: Paragraph): { runs: Run[]; plain: boolean; rule: boolean } {
    const runs: Run[] = [];
    let plain = true;
    let rule = false;
    for (const e of p.elements ?? []) {
      if (e.textRun) {
        const style = e.textRun.textStyle ?? {};
        const internal = !!style.link && !style.link.url;
        if (internal) plain = false;
        runs.push(styledRun((e.textRun.content ?? '').replace(/\n$/, ''), style));
      } else if (e.inlineObjectElement) {
        plain = false;
        runs.push(this.image(e.inlineObjectElement.inlineObjectId));
      } else if (e.footnoteReference) {
        plain = false;
        const id = e.footnoteReference.footnoteId ?? '';
        if (!this.footnotes.includes(id)) this.footnotes.push(id);
        runs.push({ text: `[^${this.footnotes.indexOf(id) + 1}]`, raw: true });
      } else if (e.person) {
        plain = false;
        const { name, email } = e.person.personProperties ?? {};
        runs.push(email ? { text: name || email, link: `mailto:${email}` } : { text: name ?? '' });
      } else if (e.richLink) {
        plain = false;
        const { title, uri } = e.richLink.richLinkProperties ?? {};
        runs.push(uri ? { text: title || uri, link: uri } : { text: title ?? '' });
      } else if (e.dateElement) {
        plain = false;
        runs.push({ text: e.dateElement.dateElementProperties?.displayText ?? '' });
      } else {
        // A rule, a page or column break, an equation, a page number: nothing a push could write back.
        plain = false;
        if (e.horizontalRule) rule = true;
      }
    }
    for (const id of p.positionedObjectIds ?? []) {
      plain = false;
      const embedded = this.doc.positionedObjects?.[id]?.positionedObjectProperties?.embeddedObject;
      runs.push({ text: ' ' }, imageRun(embedded));
    }
    return { runs, plain, rule };
  }

  private image(id: string | undefined): Run {
    return imageRun(id ? this.doc.inlineObjects?.[id]?.inlineObjectProperties?.embeddedObject : undefined);
  }

  private push(b: Omit<RenderedBlock, 'key'>): void {
    this.blocks.push({ ...b, key: blockKey(b.model) });
  }
}

function styledRun(text: string, style: TextStyle): Run {
  const run: Run = { text };
  if (style.bold) run.bold = true;
  if (style.italic) run.italic = true;
  if (style.strikethrough) run.strike = true;
  if (style.link?.url) run.link = style.link.url;
  return run;
}

/** An image as Markdown shows it: its description (or title) as the alternative text, its content address. */
function imageRun(o: { title?: string; description?: string; imageProperties?: { contentUri?: string; sourceUri?: string } } | undefined): Run {
  const alt = (o?.description || o?.title || '').replace(/\s+/g, ' ').trim();
  return { text: '', image: alt, src: o?.imageProperties?.contentUri ?? o?.imageProperties?.sourceUri ?? '' };
}
