import { readFile } from 'node:fs/promises';
import { getDocumentProxy } from 'unpdf';
import { NodeBudget } from './budget.ts';
import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { tidy } from './markdown.ts';
import { outputName } from './names.ts';
import { assertPdfWithinLimit } from './pdfGuard.ts';

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;
type TextItem = { str: string; transform: number[]; height: number; hasEOL: boolean };

/**
 * PDF → Markdown from the text layer (pdf.js through unpdf), page by page. Each page starts with
 * an HTML comment `<!-- page N -->`: invisible when rendered, so the document's own headings
 * stay its outline, and easy to find for a reader or a search hit that needs the page. Pages
 * without text (scans) are named in a warning: OCR of a PDF page needs the page rendered to an
 * image, which needs a canvas package this installation does not have. A page that cannot be
 * read is named in a warning too; the rest of the document is kept. Before a page is read, a PDF
 * over the decompressed-bytes limit (pdfGuard.ts) or the page limit fails ('too_large',
 * 'too_many_pages').
 */
export async function convertPdf(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const name = outputName(input.name, 'md');
  const bytes = await readFile(input.file);
  await assertPdfWithinLimit(bytes, input.limits.maxDecompressedBytes);
  // A view, not a copy (pdf.js wants a plain Uint8Array, not a Buffer): one less copy of a 50 MiB file.
  const pdf = await open(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const warnings: string[] = [];
  try {
    const total = pdf.numPages;
    if (total > input.limits.maxPdfPages) {
      throw new ConversionError(
        'too_many_pages',
        `the PDF has ${total} pages, more than the ${input.limits.maxPdfPages} one conversion may read (CNS_INGEST_MAX_PDF_PAGES); split it, or ingest it with mode raw to store it unchanged`,
      );
    }
    const budget = new NodeBudget(input.limits.maxNodeBytes, name);
    const parts: string[] = [];
    const blank: number[] = [];
    for (let n = 1; n <= total; n++) {
      let text = '';
      try {
        const page = await pdf.getPage(n);
        text = pageText((await page.getTextContent()).items as TextItem[]);
        page.cleanup();
      } catch (err) {
        warnings.push(`page ${n} could not be read (${(err as Error).message}); it was left out`);
      }
      if (text === '') blank.push(n);
      const part = `<!-- page ${n} -->\n\n${text}`;
      budget.add(Buffer.byteLength(part) + 2);
      parts.push(part);
      progress({ done: n, total, unit: 'pages' });
    }
    if (blank.length) {
      warnings.push(
        `${blank.length === total ? 'no page has' : `page${blank.length > 1 ? 's' : ''} ${ranges(blank)} ${blank.length > 1 ? 'have' : 'has'}`} no text layer (scanned?): ` +
          'their text was not extracted, because OCR of PDF pages needs a page renderer (a canvas package) that this installation does not have',
      );
    }
    return { nodes: [{ name, type: 'markdown', content: tidy(parts.join('\n\n')) }], warnings };
  } finally {
    await pdf.destroy();
  }
}

async function open(data: Uint8Array): Promise<PdfDocument> {
  try {
    return await getDocumentProxy(data, { verbosity: 0 });
  } catch (err) {
    const e = err as { name?: string; message?: string };
    if (e.name === 'PasswordException') throw new ConversionError('encrypted', 'the PDF is password-protected; remove the password and upload it again');
    throw new ConversionError('corrupt', `the PDF cannot be read: ${e.message ?? String(err)}`);
  }
}

/**
 * A page's text items as lines: a new line where pdf.js saw one or where the baseline moves, a
 * blank line (a paragraph break) where the gap between lines is well over the type size.
 */
export function pageText(items: TextItem[]): string {
  const out: string[] = [];
  let line = '';
  let lineY: number | null = null;
  let size = 0;
  let previousY: number | null = null;
  const flush = () => {
    if (line.trim() !== '') {
      if (previousY !== null && lineY !== null && Math.abs(previousY - lineY) > size * 1.8) out.push('');
      out.push(line.trim());
      previousY = lineY;
    }
    line = '';
    lineY = null;
  };
  for (const item of items) {
    if (typeof item.str !== 'string') continue;
    const y = item.transform[5]!;
    if (lineY !== null && item.str !== '' && Math.abs(y - lineY) > Math.max(item.height, 1) * 0.6) flush();
    if (lineY === null && item.str.trim() !== '') {
      lineY = y;
      size = item.height || size || 12;
    }
    line += item.str;
    if (item.hasEOL) flush();
  }
  flush();
  return out.join('\n');
}

/** `1-3, 7, 9-10` */
function ranges(pages: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    out.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}
