import { assertNodeSizes } from './budget.ts';
import { ConversionError, type ConvertInput, type ConvertOutput, type IngestMode, type Progress } from './converter.ts';
import { detectFormat, extensionsOf, TABULAR, type SourceFormat } from './detect.ts';
import { safeName } from './names.ts';
import { ocrLangPath } from './ocrData.ts';

export { ConversionError } from './converter.ts';
export type { ConversionLimits, ConvertedNode, ConvertInput, ConvertOutput, IngestMode, Progress, ProgressUnit } from './converter.ts';

type Converter = (input: ConvertInput, progress: (p: Progress) => void) => Promise<ConvertOutput>;

/** Each converter is imported on first use: a process that never sees a web page never loads jsdom. */
const CONVERTERS: Record<SourceFormat, () => Promise<Converter>> = {
  pdf: async () => (await import('./pdf.ts')).convertPdf,
  docx: async () => (await import('./docx.ts')).convertDocx,
  xlsx: async () => (await import('./xlsx.ts')).convertXlsx,
  csv: async () => {
    const { convertCsv } = await import('./csv.ts');
    return (input, progress) => convertCsv(input, progress, false);
  },
  tsv: async () => {
    const { convertCsv } = await import('./csv.ts');
    return (input, progress) => convertCsv(input, progress, true);
  },
  html: async () => (await import('./html.ts')).convertHtml,
  image: async () => (await import('./image.ts')).convertImage,
  text: async () => (await import('./text.ts')).convertText,
  json: async () => (await import('./json.ts')).convertJson,
};

/** Progress is reported at most this often (and always at the end). */
const PROGRESS_EVERY_MS = 100;

/**
 * Converts one source into content nodes. The format comes from the name's extension, else the
 * mime type (detect.ts). `raw` keeps the file unchanged as a file node, as does a format no
 * converter knows (with a warning); `json` on a format that only becomes Markdown (PDF, DOCX,
 * HTML, images, text) is 'unsupported'. Every markdown/json node is checked against
 * `limits.maxNodeBytes`. Runs in the calling thread: the service calls it through the
 * ConversionPool (src/ingest/worker), which keeps it off the event loop.
 */
export async function convert(input: ConvertInput, onProgress?: (p: Progress) => void): Promise<ConvertOutput> {
  const format = detectFormat(input.name, input.mimeType);
  if (input.mode === 'raw' || format === null) {
    const warnings = input.mode === 'raw' ? [] : [`no converter reads this kind of file; it was stored unchanged`];
    return { nodes: [{ name: safeName(input.name), type: 'file', file: input.file }], warnings };
  }
  if (input.mode === 'json' && !TABULAR.has(format)) {
    throw new ConversionError('unsupported', `a ${LABELS[format]} becomes Markdown, not JSON: use mode markdown (or raw to store it unchanged)`);
  }
  const converter = await CONVERTERS[format]();
  const output = await converter(input, throttled(onProgress));
  assertNodeSizes(output, input.limits.maxNodeBytes);
  return output;
}

function throttled(onProgress?: (p: Progress) => void): (p: Progress) => void {
  if (!onProgress) return () => {};
  let last = 0;
  return (p) => {
    const now = performance.now();
    if (p.done < p.total && now - last < PROGRESS_EVERY_MS) return;
    last = now;
    onProgress(p);
  };
}

const LABELS: Record<SourceFormat, string> = {
  pdf: 'PDF',
  docx: 'DOCX document',
  xlsx: 'XLSX workbook',
  csv: 'CSV file',
  tsv: 'TSV file',
  html: 'web page',
  image: 'image',
  text: 'text file',
  json: 'JSON file',
};

export interface FormatInfo {
  format: SourceFormat;
  extensions: string[];
  /** The modes besides `raw` (which every file accepts). */
  modes: Exclude<IngestMode, 'raw'>[];
  /** False when the converter cannot run here (OCR without its model). */
  available: boolean;
}

export interface FormatsInfo {
  formats: FormatInfo[];
  /** OCR of images: the bundled English model is present. */
  ocr: boolean;
  ocrLanguages: string[];
  /** OCR of PDF pages without a text layer: needs a page renderer (a canvas package), not installed. */
  pdfPageOcr: false;
}

/** What this installation converts, for the health answer. Cheap: loads no converter. */
export function formats(): FormatsInfo {
  const ocr = ocrLangPath() !== null;
  const formats = (Object.keys(LABELS) as SourceFormat[]).map((format) => ({
    format,
    extensions: extensionsOf(format),
    modes: TABULAR.has(format) ? (['markdown', 'json'] as const).slice() : (['markdown'] as const).slice(),
    available: format !== 'image' || ocr,
  }));
  return {
    formats,
    ocr,
    ocrLanguages: ocr ? ['eng'] : [],
    pdfPageOcr: false,
  };
}
