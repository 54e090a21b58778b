import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversionError } from '../../../ingest/converters/converter.ts';
import type { ConnectorContext } from '../../runtime/connector.ts';

/**
 * Limits of a conversion: the bomb guards of the ingestion defaults (CNS_INGEST_MAX_DECOMPRESSED_BYTES,
 * CNS_INGEST_MAX_PDF_PAGES; the service lowers them to its own settings), and a node size the
 * runtime checks itself against the store's limit (an item too large is skipped there, with a warning).
 */
const LIMITS = { maxDecompressedBytes: 500 * 1024 * 1024, maxPdfPages: 2000, maxNodeBytes: 256 * 1024 * 1024 };

export type Converted = { type: 'markdown'; content: string } | { type: 'json'; content: unknown };

/**
 * A downloaded file through the service's ingestion converters (src/ingest/converters): a PDF or
 * DOCX as Markdown, an XLSX workbook as `{<sheet>: rows}`. The converters read a file, so the
 * bytes go to a temporary one. They run in the service's conversion processes (`ctx.convert`),
 * off the event loop. A file the converters cannot read (corrupt, encrypted, too large) gives null: it
 * is kept as the file it is.
 */
export async function convertBytes(ctx: Pick<ConnectorContext, 'convert'>, bytes: Buffer, name: string, mimeType: string, target: 'markdown' | 'json'): Promise<Converted | null> {
  const dir = await mkdtemp(join(tmpdir(), 'cns-drive-'));
  try {
    const file = join(dir, 'source');
    await writeFile(file, bytes);
    const out = await ctx.convert({ file, name, mimeType, mode: target, limits: LIMITS });
    if (target === 'markdown') {
      const node = out.nodes.find((n) => n.type === 'markdown');
      return node && node.type === 'markdown' ? { type: 'markdown', content: node.content } : null;
    }
    // A workbook: one JSON node per sheet (`<book>/<sheet>.json`), gathered under the sheet names.
    const sheets: Record<string, unknown> = {};
    for (const n of out.nodes) if (n.type === 'json') sheets[n.name.slice(n.name.lastIndexOf('/') + 1).replace(/\.json$/, '')] = n.content;
    return { type: 'json', content: sheets };
  } catch (err) {
    if (err instanceof ConversionError) return null;
    throw err;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
