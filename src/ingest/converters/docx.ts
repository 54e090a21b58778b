import mammoth from 'mammoth';
import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { parseHtml } from './dom.ts';
import { elementToMarkdown } from './markdown.ts';
import { outputName } from './names.ts';
import { assertZipWithinLimit } from '../../content/archives/zipGuard.ts';

/**
 * DOCX → Markdown: mammoth maps Word's styles to HTML (headings, lists, tables, links), then the
 * shared HTML → Markdown step writes GFM tables. The zip-bomb guard runs first, on the declared
 * sizes. Embedded images are left out (as data URIs they would bloat the text many times over)
 * and counted in a warning; linked files are never read.
 */
export async function convertDocx(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const { declaredBytes } = await assertZipWithinLimit(input.file, input.limits.maxDecompressedBytes, 'DOCX');
  let images = 0;
  let result: Awaited<ReturnType<typeof mammoth.convertToHtml>>;
  try {
    result = await mammoth.convertToHtml(
      { path: input.file },
      {
        externalFileAccess: false,
        convertImage: mammoth.images.imgElement(async () => {
          images++;
          return { src: '' };
        }),
      },
    );
  } catch (err) {
    throw new ConversionError('corrupt', `the DOCX cannot be read: ${(err as Error).message}`);
  }
  const parsed = parseHtml(`<!doctype html><body>${result.value}</body>`);
  try {
    const body = parsed.document.body!;
    for (const img of [...body.querySelectorAll('img')]) img.replaceWith(parsed.document.createTextNode(img.getAttribute('alt') ?? ''));
    const warnings = result.messages.filter((m) => m.type === 'error').map((m) => `DOCX: ${m.message}`);
    if (images) warnings.push(`${images} embedded image${images > 1 ? 's were' : ' was'} left out (only their alt text is kept)`);
    progress({ done: declaredBytes, total: declaredBytes, unit: 'bytes' });
    return { nodes: [{ name: outputName(input.name, 'md'), type: 'markdown', content: elementToMarkdown(body) }], warnings };
  } finally {
    parsed.close();
  }
}
