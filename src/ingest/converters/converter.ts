/**
 * What a conversion turns one source (an uploaded file, a fetched web page) into: content nodes
 * named relative to the task's target folder, ready for ONE commit through the content store.
 * Converters are pure functions of their input; they run off the event loop (see the worker pool).
 */

export type IngestMode = 'markdown' | 'json' | 'raw';

export type ProgressUnit = 'pages' | 'rows' | 'bytes';

export interface ConversionLimits {
  /**
   * The bomb guards: total decompressed size a DOCX/XLSX (zip) may expand to, and the bytes a
   * PDF's streams expand to, each counted once per reference (pdfGuard.ts).
   */
  maxDecompressedBytes: number;
  /** Pages a PDF may have ('too_many_pages' past it). */
  maxPdfPages: number;
  /** The largest single output node, bytes (the content store's own limit). */
  maxNodeBytes: number;
}

export interface ConvertInput {
  /** The source on disk (an upload streamed to a temporary file). */
  file: string;
  /** The source's original name (`report.pdf`); decides the format with `mimeType`. */
  name: string;
  mimeType?: string;
  /**
   * markdown: text formats to Markdown (tables as one Markdown table); json: tabular formats to
   * JSON rows only; raw: stored unchanged; null (nothing asked): each format's default, which is
   * Markdown for text and, for tables (CSV, TSV, XLSX), JSON rows plus a Markdown preview.
   */
  mode: IngestMode | null;
  limits: ConversionLimits;
  /** For HTML fetched from a URL: its address (front matter, relative links made absolute). */
  sourceUrl?: string;
}

/** One node a conversion produced: `content` is text for markdown, a JSON value for json, a file on disk for file nodes. */
export type ConvertedNode =
  | { name: string; type: 'markdown'; content: string }
  | { name: string; type: 'json'; content: unknown }
  | { name: string; type: 'file'; file: string };

export interface ConvertOutput {
  nodes: ConvertedNode[];
  /** Things a person should know (pages without text and no OCR, a sheet cut short, …). */
  warnings: string[];
}

export interface Progress {
  done: number;
  total: number;
  unit: ProgressUnit;
}

export { ConversionError } from '../../errors/conversionError.ts';
