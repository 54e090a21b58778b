import type { ConnectorContext, SourceItem } from '../../runtime/connector.ts';
import { fileNode } from '../github/files.ts';
import { download, exportAs, type DriveFile } from './api.ts';
import { convertBytes } from './convert.ts';
import { csvRows } from './csvRows.ts';
import type { Kind } from './kinds.ts';

/** A node's type and content, as SourceItem holds them, and the kind it was made as (a failed conversion keeps the file as it is). */
export type NodeContent = Pick<SourceItem, 'type' | 'content'> & { kind: Kind };

/**
 * The content of a file as its kind makes it (see kinds.ts): one export or download, then a
 * conversion where the kind asks for one. A Doc whose Markdown export Drive refuses (older
 * Drives, or Markdown over the 10 MB export limit where plain text fits) is exported as text.
 */
export async function fetchContent(ctx: ConnectorContext, file: DriveFile, kind: Kind): Promise<NodeContent> {
  switch (kind.how) {
    case 'doc': {
      const md = (await exportAs(ctx, file.id, 'text/markdown')) ?? (await exportAs(ctx, file.id, 'text/plain'));
      if (md === null) throw refused(file, 'Markdown or text');
      return { type: 'markdown', content: md.toString('utf8').replace(/^\uFEFF/, ''), kind };
    }
    case 'sheet': {
      const csv = await exportAs(ctx, file.id, 'text/csv');
      if (csv === null) throw refused(file, 'CSV');
      return { type: 'json', content: csvRows(csv.toString('utf8')), kind };
    }
    case 'pdf-export': {
      const pdf = await exportAs(ctx, file.id, 'application/pdf');
      if (pdf === null) throw refused(file, 'PDF');
      const converted = kind.convert ? await convertBytes(ctx, pdf, `${file.name}.pdf`, 'application/pdf', 'markdown') : null;
      return converted ? { ...converted, kind } : { type: 'file', content: pdf, kind: { how: 'pdf-export', convert: false } };
    }
    case 'download': {
      const bytes = await download(ctx, file.id);
      const converted = kind.convert ? await convertBytes(ctx, bytes, file.name, file.mimeType, kind.convert) : null;
      // A file the converters could not read is kept as it is, under its own name's type.
      return converted ? { ...converted, kind } : { ...fileNode(file.name, bytes), kind: { how: 'download', convert: null } };
    }
  }
}

function refused(file: DriveFile, as: string): Error {
  return new Error(`Drive refused to export "${file.name}" (${file.id}) as ${as}`);
}
