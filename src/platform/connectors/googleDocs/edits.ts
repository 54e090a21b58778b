import { diffKeys, type Hunk } from './diff.ts';
import { blockKey, runsKey, runsText, writable, type BlockModel, type ListInfo, type ParagraphBlock } from './model.ts';
import type { RenderedBlock, RenderedDocument, Seg } from './render.ts';
import type { NamedStyleType } from './types.ts';

/** An edit the push cannot make faithfully; its message says what to do instead. */
export class EditRefused extends Error {}

export type DocsRequest = Record<string, unknown>;

/** The text styles Markdown carries (plus underline, which Google gives links): reset on rewritten text, then set. */
const TEXT_FIELDS = 'bold,italic,underline,strikethrough,link';

interface Props {
  style: NamedStyleType;
  list: ListInfo | null;
}

/** Requests of one place in the document, and where it is (places are sent from the end of the document back). */
interface Unit {
  at: number;
  requests: DocsRequest[];
}

/** How new paragraphs are put in place. */
interface Placement {
  at: number;
  /** Text deleted first, [from, to). */
  del: [number, number] | null;
  insertAt: number;
  /**
   * `replace`: the text goes where old text was, before a newline that stays; `before`: new
   * paragraphs ahead of an existing one; `after`: new paragraphs after an existing one; `keep`:
   * the text is there already (a change of heading level or list only).
   */
  shape: 'replace' | 'before' | 'after' | 'keep';
  /** The paragraphs whose style and bullet the new ones start with (Google copies them into new paragraphs). */
  candidates: Props[];
  paras: ParagraphBlock[];
}

/**
 * The smallest documents.batchUpdate that turns the document (as rendered, with the index of
 * every block) into the edited Markdown: blocks are compared by meaning; each changed run of
 * paragraphs is deleted and written again (deleteContentRange + insertText, its bold, italic,
 * strikethrough and links with updateTextStyle), a heading level change is an
 * updateParagraphStyle, a list change deleteParagraphBullets/createParagraphBullets (nesting by
 * leading tabs, as Google reads them). Places are sent from the end of the document back, so
 * indices computed on the document as read stay right. Throws EditRefused for what it cannot
 * write faithfully: tables, images, rules, code, quotes, footnotes, paragraphs holding smart
 * chips or internal links, lists mixing numbered and bulleted levels.
 */
export function planEdits(doc: RenderedDocument, next: BlockModel[]): DocsRequest[] {
  const units: Unit[] = [];
  for (const h of diffKeys(doc.blocks.map((b) => b.key), next.map(blockKey))) units.push(...unitsOf(doc, next, h));
  units.sort((a, b) => b.at - a.at);
  return units.flatMap((u) => u.requests);
}

function unitsOf(doc: RenderedDocument, next: BlockModel[], h: Hunk): Unit[] {
  const olds = doc.blocks.slice(h.oldStart, h.oldEnd);
  const news = next.slice(h.newStart, h.newEnd);
  if (news.length === 0) return [deletion(doc, h)];
  // What was there is checked first: an edited table is refused as a table edit.
  for (const o of olds) rewritable(doc, o);
  for (const n of news) {
    if (!writable(n)) throw new EditRefused(`${n.kind === 'other' ? n.what : 'an image'} cannot be written to Google Docs from here (the push writes text paragraphs, headings and lists): add it in Google Docs`);
  }
  const paras = news as ParagraphBlock[];
  if (olds.length === 0) return [build(insertion(doc, h, paras))];
  if (olds.length === paras.length) return olds.map((o, k) => build(pair(doc, o, paras[k])));
  return [build(replacement(doc, olds, paras))];
}

/** One paragraph changed into another: its text rewritten (or kept), its newline (style, list) kept. */
function pair(doc: RenderedDocument, o: RenderedBlock, n: ParagraphBlock): Placement {
  const seg = doc.segs[o.seg!];
  const same = JSON.stringify(runsKey((o.model as ParagraphBlock).runs)) === JSON.stringify(runsKey(n.runs));
  return { at: seg.start, del: same ? null : [seg.start, seg.end - 1], insertAt: seg.start, shape: same ? 'keep' : 'replace', candidates: [propsOf(doc, o)], paras: [n] };
}

/** Several paragraphs replaced by a different number of them: one rewrite of the whole run. */
function replacement(doc: RenderedDocument, olds: RenderedBlock[], paras: ParagraphBlock[]): Placement {
  const first = olds[0].seg!;
  const last = olds.at(-1)!.seg!;
  for (let s = first; s <= last; s++) {
    const seg = doc.segs[s];
    if (seg.kind !== 'paragraph' || !(seg.plain || seg.empty)) throw new EditRefused('the edited paragraphs surround something Markdown does not show (a page break, a section break): edit them in Google Docs');
  }
  const start = doc.segs[first].start;
  return { at: start, del: [start, doc.segs[last].end - 1], insertAt: start, shape: 'replace', candidates: [propsOf(doc, olds[0]), propsOf(doc, olds.at(-1)!)], paras };
}

/** New paragraphs between two unchanged blocks: after the one before (a list goes on), else before the one after. */
function insertion(doc: RenderedDocument, h: Hunk, paras: ParagraphBlock[]): Placement {
  const xi = h.oldStart - 1;
  const x = doc.blocks[xi];
  const y = doc.blocks[h.oldStart];
  const paragraph = (b: RenderedBlock | undefined) => !!b && b.seg !== null && doc.segs[b.seg].kind === 'paragraph';
  const canAfter = paragraph(x) && doc.blocks[xi + 1]?.seg !== x.seg;
  const canBefore = paragraph(y) && (h.oldStart === 0 || doc.blocks[h.oldStart - 1].seg !== y.seg);
  const continuesList = canAfter && paras[0].list !== null && propsOf(doc, x).list !== null;
  if (canAfter && (continuesList || !canBefore)) {
    const end = doc.segs[x.seg!].end;
    return { at: end - 1, del: null, insertAt: end - 1, shape: 'after', candidates: [propsOf(doc, x)], paras };
  }
  if (canBefore) {
    const start = doc.segs[y.seg!].start;
    return { at: start, del: null, insertAt: start, shape: 'before', candidates: [propsOf(doc, y)], paras };
  }
  throw new EditRefused('text added next to a table or the footnotes cannot be placed from here: add it in Google Docs');
}

/** Blocks deleted: their whole paragraphs go, the newline before a table or at the end of the body staying. */
function deletion(doc: RenderedDocument, h: Hunk): Unit {
  const olds = doc.blocks.slice(h.oldStart, h.oldEnd);
  if (olds.some((b) => b.seg === null)) throw new EditRefused('the footnotes cannot be edited here: edit them in Google Docs');
  const first = olds[0].seg!;
  const last = olds.at(-1)!.seg!;
  if (doc.blocks[h.oldStart - 1]?.seg === first || doc.blocks[h.oldEnd]?.seg === last) throw new EditRefused('part of a paragraph holding a horizontal rule cannot be deleted alone: edit it in Google Docs');
  for (let s = first; s <= last; s++) {
    if (doc.segs[s].kind !== 'paragraph') throw new EditRefused(`${doc.segs[s].kind === 'table' ? 'a table' : 'a section break or table of contents'} cannot be deleted from here: delete it in Google Docs`);
  }
  const start = doc.segs[first].start;
  const end = doc.segs[last].end;
  if (doc.segs[last + 1]?.kind === 'paragraph') return { at: start, requests: [deleteRange(start, end)] };
  // Last in the body or before a table: that newline cannot go, so the paragraph before gives up its own.
  const before = doc.segs[first - 1];
  if (before?.kind !== 'paragraph') throw new EditRefused('the only paragraphs around a table cannot be deleted from here: delete them in Google Docs');
  const lastSeg = doc.segs[last];
  if (JSON.stringify(before.bullet) !== JSON.stringify(lastSeg.bullet)) {
    throw new EditRefused('deleting these last paragraphs would move the paragraph before them into another list: delete them in Google Docs');
  }
  const requests: DocsRequest[] = [deleteRange(before.end - 1, end - 1)];
  if (before.style !== lastSeg.style) requests.push(paragraphStyle(before.start, before.end, before.style));
  return { at: before.end - 1, requests };
}

function build(p: Placement): Unit {
  const explicit = p.paras.some((q) => !p.candidates.every((c) => sameList(c.list, q.list)));
  const tabs = (q: ParagraphBlock) => (explicit && q.list ? '\t'.repeat(q.list.depth) : '');
  const texts = p.paras.map((q) => tabs(q) + runsText(q.runs));
  const text =
    p.shape === 'replace' ? texts.join('\n') : p.shape === 'before' ? `${texts.join('\n')}\n` : p.shape === 'after' ? `\n${texts.join('\n')}` : tabs(p.paras[0]);
  const starts: number[] = [];
  let pos = p.shape === 'after' ? p.insertAt + 1 : p.insertAt;
  for (const t of texts) {
    starts.push(pos);
    pos += t.length + 1;
  }
  const endOf = (i: number) => starts[i] + texts[i].length + 1;

  const requests: DocsRequest[] = [];
  if (p.del && p.del[1] > p.del[0]) requests.push(deleteRange(p.del[0], p.del[1]));
  if (text !== '') requests.push({ insertText: { location: { index: p.insertAt }, text } });
  if (p.shape !== 'keep' && p.paras.some((q) => runsText(q.runs) !== '')) {
    // Inserted text takes the style of the text before it: clear what Markdown carries, then set it.
    requests.push(textStyle(starts[0], endOf(texts.length - 1) - 1, {}, TEXT_FIELDS));
    p.paras.forEach((q, i) => {
      let at = starts[i] + tabs(q).length;
      for (const r of q.runs) {
        const style: Record<string, unknown> = {};
        if (r.bold) style.bold = true;
        if (r.italic) style.italic = true;
        if (r.strike) style.strikethrough = true;
        if (r.link) style.link = { url: r.link };
        if (Object.keys(style).length && r.text.length) requests.push(textStyle(at, at + r.text.length, style, Object.keys(style).join(',')));
        at += r.text.length;
      }
    });
  }
  p.paras.forEach((q, i) => {
    if (!p.candidates.every((c) => inClass(c.style, q.level))) requests.push(paragraphStyle(starts[i], endOf(i), styleFor(q.level)));
  });
  if (explicit) {
    if (p.candidates.some((c) => c.list)) requests.push({ deleteParagraphBullets: { range: { startIndex: starts[0], endIndex: endOf(texts.length - 1) } } });
    // Runs of list items, the last first: creating bullets removes the tabs, which shifts what follows.
    const runs: number[][] = [];
    p.paras.forEach((q, i) => {
      if (!q.list) return;
      if (i > 0 && p.paras[i - 1].list) runs.at(-1)!.push(i);
      else runs.push([i]);
    });
    for (const run of runs.reverse()) {
      const ordered = p.paras[run[0]].list!.ordered;
      if (run.some((i) => p.paras[i].list!.ordered !== ordered)) {
        throw new EditRefused('a new list mixing numbered and bulleted levels cannot be made from here (Google sets one kind per list): make it in Google Docs');
      }
      requests.push({
        createParagraphBullets: {
          range: { startIndex: starts[run[0]], endIndex: endOf(run.at(-1)!) },
          bulletPreset: ordered ? 'NUMBERED_DECIMAL_ALPHA_ROMAN' : 'BULLET_DISC_CIRCLE_SQUARE',
        },
      });
    }
  }
  return { at: p.at, requests };
}

/** An old block the push may rewrite: a paragraph of text only, in the body. */
function rewritable(doc: RenderedDocument, o: RenderedBlock): void {
  if (o.seg === null) throw new EditRefused('the footnotes cannot be edited here: edit them in Google Docs');
  const seg = doc.segs[o.seg];
  if (seg.kind === 'table') throw new EditRefused('tables are not sent back (the push writes paragraphs, headings and lists): edit the table in Google Docs');
  if (!seg.plain) {
    const words = o.markdown.replace(/\s+/g, ' ').slice(0, 40);
    throw new EditRefused(`"${words}" holds what Markdown cannot carry back (an image, a rule, a smart chip, a footnote mark, an internal link or a heading in a list): edit it in Google Docs`);
  }
}

function propsOf(doc: RenderedDocument, b: RenderedBlock): Props {
  const seg: Seg = doc.segs[b.seg!];
  const list = b.model.kind === 'paragraph' ? b.model.list : seg.bullet ? { ordered: false, depth: seg.bullet.nesting } : null;
  return { style: seg.style, list };
}

const sameList = (a: ListInfo | null, b: ListInfo | null) => (a === null ? b === null : b !== null && a.ordered === b.ordered && a.depth === b.depth);

/** The named styles a Markdown heading level stands for: `#` is a title or a heading 1, `##` a subtitle or a heading 2. */
function inClass(style: NamedStyleType, level: number): boolean {
  if (level === 0) return style === 'NORMAL_TEXT';
  if (level === 1 && style === 'TITLE') return true;
  if (level === 2 && style === 'SUBTITLE') return true;
  return style === `HEADING_${level}`;
}

const styleFor = (level: number): NamedStyleType => (level === 0 ? 'NORMAL_TEXT' : (`HEADING_${Math.min(level, 6)}` as NamedStyleType));

const deleteRange = (startIndex: number, endIndex: number): DocsRequest => ({ deleteContentRange: { range: { startIndex, endIndex } } });

const textStyle = (startIndex: number, endIndex: number, style: Record<string, unknown>, fields: string): DocsRequest => ({
  updateTextStyle: { range: { startIndex, endIndex }, textStyle: style, fields },
});

const paragraphStyle = (startIndex: number, endIndex: number, namedStyleType: NamedStyleType): DocsRequest => ({
  updateParagraphStyle: { range: { startIndex, endIndex }, paragraphStyle: { namedStyleType }, fields: 'namedStyleType' },
});
