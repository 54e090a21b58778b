import type { GmailMessage, GmailPart } from './api.ts';

/** A file attached to a message (a MIME part with a file name). */
export interface Attachment {
  partId: string;
  filename: string;
  mimeType: string;
  size: number;
  /** Where its bytes are: inline in the message, or fetched by id. */
  data: string | null;
  attachmentId: string | null;
}

/** The part that holds the message's text, and whether it is plain text or HTML. */
export interface TextPart {
  part: GmailPart;
  kind: 'plain' | 'html';
}

/** A header of the message (the first of that name, case-insensitive), or ''. */
export function header(message: GmailMessage, name: string): string {
  const wanted = name.toLowerCase();
  return message.payload?.headers?.find((h) => h.name.toLowerCase() === wanted)?.value ?? '';
}

function partHeader(part: GmailPart, name: string): string {
  return part.headers?.find((h) => h.name.toLowerCase() === name)?.value ?? '';
}

/** Every part, depth first (the order a mail client shows them in). */
function* walk(part: GmailPart | undefined): Generator<GmailPart> {
  if (!part) return;
  yield part;
  for (const child of part.parts ?? []) yield* walk(child);
}

/** A part that is a file rather than the message's text: it has a name, or says it is an attachment. */
const isFile = (part: GmailPart): boolean => (part.filename ?? '') !== '' || /^\s*attachment/i.test(partHeader(part, 'content-disposition'));

/**
 * The message's text: the first text/plain part that is not a file, else the first text/html
 * one (multipart/alternative offers both; plain text is the sender's own words, HTML needs converting).
 */
export function textPart(message: GmailMessage): TextPart | null {
  const parts = [...walk(message.payload)].filter((p) => !isFile(p));
  const plain = parts.find((p) => p.mimeType?.toLowerCase() === 'text/plain');
  if (plain) return { part: plain, kind: 'plain' };
  const html = parts.find((p) => p.mimeType?.toLowerCase() === 'text/html');
  return html ? { part: html, kind: 'html' } : null;
}

export function attachments(message: GmailMessage): Attachment[] {
  return [...walk(message.payload)]
    .filter((p) => isFile(p) && !(p.parts?.length))
    .map((p, i) => ({
      partId: p.partId || `attachment-${i}`,
      filename: p.filename || `attachment-${i + 1}`,
      mimeType: p.mimeType || 'application/octet-stream',
      size: p.body?.size ?? 0,
      data: p.body?.data ?? null,
      attachmentId: p.body?.attachmentId ?? null,
    }));
}

/**
 * A text part's bytes as a string in the charset its Content-Type names (Gmail hands over the
 * bytes after undoing the transfer encoding, not converted), UTF-8 when none is named or Node
 * does not know it.
 */
export function decodeText(part: GmailPart, bytes: Buffer): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(partHeader(part, 'content-type'))?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      /* an unknown charset: UTF-8 below */
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}
