import { createHash } from 'node:crypto';
import type { KnownItems, SourceItem } from '../../runtime/connector.ts';
import { variantOf } from '../../runtime/itemPaths.ts';
import { sanitizeName } from '../notion/names.ts';
import type { GmailApi, GmailMessage } from './api.ts';
import { htmlToText, messageMarkdown, type ListedAttachment } from './markdown.ts';
import { attachments, decodeText, header, textPart } from './mime.ts';
import { messageStem, type ThreadFolders } from './names.ts';

export interface ItemContext {
  api: GmailApi;
  /** Label names by id. */
  labels: Map<string, string>;
  folders: ThreadFolders;
  /** Store attachments as files (config `attachments`). */
  withFiles: boolean;
  known: KnownItems;
}

/** The source id of an attachment: the message and the part (Gmail's attachment ids change at every fetch). */
export const attachmentId = (messageId: string, partId: string) => `${messageId}/${partId}`;

/** The message's text: plain text as written, HTML as Markdown, '' when it has neither. */
async function bodyOf(api: GmailApi, message: GmailMessage): Promise<string> {
  const text = textPart(message);
  if (!text) return '';
  const body = text.part.body;
  const bytes = body?.data ? Buffer.from(body.data, 'base64url') : body?.attachmentId ? await api.attachment(message.id, body.attachmentId) : Buffer.alloc(0);
  const decoded = decodeText(text.part, bytes);
  return text.kind === 'html' ? htmlToText(decoded) : decoded;
}

/**
 * A message's nodes: its Markdown at `<thread>/<date> <subject>.md` and, when files are kept,
 * each attachment at `<thread>/<date> <subject>/<file name>`. An attachment already stored at
 * its path is not downloaded again (a message's parts never change).
 */
export async function messageItems(c: ItemContext, message: GmailMessage): Promise<SourceItem[]> {
  const subject = header(message, 'Subject');
  const folder = c.folders.folder(message.threadId, subject);
  const stem = messageStem(message.internalDate, subject);
  const items: SourceItem[] = [];
  const listed: ListedAttachment[] = [];
  const names = new Set<string>();
  for (const a of attachments(message)) {
    if (!c.withFiles) {
      listed.push({ filename: a.filename, mimeType: a.mimeType, size: a.size, link: null });
      continue;
    }
    let name = sanitizeName(a.filename);
    for (let n = 2; names.has(name.toLowerCase()); n++) name = variantOf(sanitizeName(a.filename), n);
    names.add(name.toLowerCase());
    const sourceId = attachmentId(message.id, a.partId);
    const path = `${folder}/${stem}/${name}`;
    listed.push({ filename: a.filename, mimeType: a.mimeType, size: a.size, link: `${stem}/${name}` });
    if (c.known.get(sourceId)?.path === path) continue;
    const bytes = a.data !== null ? Buffer.from(a.data, 'base64url') : a.attachmentId ? await c.api.attachment(message.id, a.attachmentId) : Buffer.alloc(0);
    items.push({ sourceId, path, type: 'file', content: bytes, sourceVersion: `${bytes.length}`, meta: { kind: 'attachment', message: message.id } });
  }
  const labels = (message.labelIds ?? []).map((id) => c.labels.get(id) ?? id);
  const markdown = messageMarkdown(message, await bodyOf(c.api, message), labels, listed);
  items.unshift({
    sourceId: message.id,
    path: `${folder}/${stem}.md`,
    type: 'markdown',
    content: markdown,
    // Labels change a message (and its history id); the rendering also depends on label names and settings.
    sourceVersion: `${message.historyId}:${createHash('sha256').update(markdown).digest('hex').slice(0, 12)}`,
    meta: { kind: 'message', thread: message.threadId, folder },
  });
  return items;
}
