import { parseHtml } from '../../../ingest/converters/dom.ts';
import { elementToMarkdown } from '../../../ingest/converters/markdown.ts';
import type { GmailMessage } from './api.ts';
import { header } from './mime.ts';

/** An attachment as the message's Markdown lists it; `link` is the stored file's path relative to the message. */
export interface ListedAttachment {
  filename: string;
  mimeType: string;
  size: number;
  link: string | null;
}

/**
 * An HTML body as Markdown with the project's one HTML converter (turndown with GFM tables, as
 * for ingested web pages), without Readability: an email is not an article to extract, every
 * part of it is the message. Scripts never run and nothing is fetched (remote images stay links).
 */
export function htmlToText(html: string): string {
  const parsed = parseHtml(html);
  try {
    const doc = parsed.document;
    return elementToMarkdown(doc.body ?? doc.documentElement);
  } finally {
    parsed.close();
  }
}

const q = (s: string) => JSON.stringify(s);
const list = (xs: string[]) => `[${xs.map(q).join(', ')}]`;

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A link target Markdown reads whatever its characters (spaces, parentheses). */
const target = (path: string) => `<${path.replace(/[<>]/g, (c) => encodeURIComponent(c))}>`;

/**
 * A message as Markdown: YAML front matter with its headers and Gmail facts (strings
 * JSON-quoted, which YAML reads as its own double-quoted form), the text, then its attachments
 * (linked when they are stored beside it).
 */
export function messageMarkdown(message: GmailMessage, body: string, labels: string[], files: ListedAttachment[]): string {
  const optional = (name: string, value: string) => (value === '' ? [] : [`${name}: ${q(value)}`]);
  const lines = [
    '---',
    `from: ${q(header(message, 'From'))}`,
    `to: ${q(header(message, 'To'))}`,
    ...optional('cc', header(message, 'Cc')),
    `subject: ${q(header(message, 'Subject'))}`,
    `date: ${new Date(Number(message.internalDate)).toISOString()}`,
    `labels: ${list(labels)}`,
    `message_id: ${q(header(message, 'Message-ID'))}`,
    `gmail_id: ${q(message.id)}`,
    `thread_id: ${q(message.threadId)}`,
    `attachments: ${list(files.map((f) => f.filename))}`,
    '---',
    '',
  ];
  let text = body.replace(/\r\n?/g, '\n').trim();
  if (files.length) {
    const items = files.map((f) => `- ${f.link ? `[${f.filename.replace(/([[\]\\])/g, '\\$1')}](${target(f.link)})` : f.filename} (${f.mimeType}, ${size(f.size)})`);
    text = `${text}${text === '' ? '' : '\n\n'}## Attachments\n\n${items.join('\n')}`;
  }
  return `${lines.join('\n')}${text}\n`;
}
