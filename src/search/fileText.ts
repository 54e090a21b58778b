import { asText } from './chunker.ts';

/**
 * Formats whose bytes are a container, not text a person reads: PDF and Office internals,
 * archives, images (SVG included: markup), audio and video. Their text, when a conversion
 * extracted it (ingestion with keep_original), is in the Markdown node beside them.
 */
const NOT_TEXT = /^(application\/(pdf|zip|gzip|x-tar|vnd\.openxmlformats-officedocument\.)|image\/|audio\/|video\/)/;

/**
 * The text the lexical index holds for a file node: what a reader of the file sees. An HTML
 * file gives its visible text (no scripts, styles, tags or attributes); a document, archive or
 * media file gives none; any other file its bytes when they are text (asText).
 */
export function fileText(mimeType: string | null, bytes: Buffer): string | null {
  if (mimeType && NOT_TEXT.test(mimeType)) return null;
  // A PDF under another name is still PDF internals.
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return null;
  const text = asText(bytes);
  if (text === null) return null;
  return mimeType === 'text/html' ? htmlText(text) : text;
}

/** Elements whose content is never shown as text (as turndown drops them when ingestion converts a page). */
const HIDDEN = ['script', 'style', 'noscript', 'template'];
/** Elements that break a line: their words never run into the next element's. */
const BLOCK = /^(address|article|aside|blockquote|br|dd|details|div|dl|dt|figcaption|figure|footer|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|summary|table|td|th|title|tr|ul)$/;
/** A start or end tag, attribute values quoted with `>` inside included. */
const TAG = /<(\/?)([a-zA-Z][^\s/>]*)(?:[^>"']|"[^"]*"|'[^']*')*>/g;

/**
 * The visible text of an HTML document: comments and hidden elements removed, tags dropped
 * (block elements become line breaks), character references decoded, blank runs collapsed.
 * A linear scan, not a DOM: it runs on the indexer's event loop, over files up to 2 MiB.
 */
export function htmlText(html: string): string {
  const lower = html.toLowerCase();
  let out = '';
  let at = 0;
  while (at < html.length) {
    const lt = html.indexOf('<', at);
    if (lt < 0) {
      out += html.slice(at);
      break;
    }
    out += html.slice(at, lt);
    if (lower.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      at = end < 0 ? html.length : end + 3;
      continue;
    }
    if (lower.startsWith('<!', lt) || lower.startsWith('<?', lt)) {
      // A doctype, CDATA marker or processing instruction.
      const end = html.indexOf('>', lt);
      at = end < 0 ? html.length : end + 1;
      continue;
    }
    const hidden = HIDDEN.find((name) => lower.startsWith(`<${name}`, lt) && /[\s/>]/.test(lower[lt + name.length + 1] ?? ''));
    if (hidden) {
      const close = lower.indexOf(`</${hidden}`, lt);
      const end = close < 0 ? -1 : html.indexOf('>', close);
      at = end < 0 ? html.length : end + 1;
      out += '\n';
      continue;
    }
    TAG.lastIndex = lt;
    const tag = TAG.exec(html);
    if (!tag || tag.index !== lt) {
      // A `<` that starts no tag (`a < b`) is text.
      out += '<';
      at = lt + 1;
      continue;
    }
    out += BLOCK.test(tag[2]!.toLowerCase()) ? '\n' : '';
    at = lt + tag[0].length;
  }
  return decodeEntities(out)
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', hellip: '…', mdash: '—', ndash: '–', laquo: '«', raquo: '»' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}
