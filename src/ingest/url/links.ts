/** Links looked for in this much of a page: navigation sits near its top, and a huge page is not read whole on the event loop. */
export const LINK_SCAN_BYTES = 2 * 1024 * 1024;

const ANCHOR = /<a\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
const BASE = /<base\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;
/** Comments, scripts and styles hold text that looks like markup. */
const INERT = /<!--[\s\S]*?-->|<script\b[\s\S]*?<\/script\s*>|<style\b[\s\S]*?<\/style\s*>/gi;

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The character references an href may carry (`&amp;` above all). */
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

/**
 * The http(s) targets of a page's `<a href>` links, absolute (against `<base href>` when the page
 * has one), without fragments, in page order, each once. A scan of the markup rather than a DOM:
 * the page is parsed into a DOM once, by the converter, off the event loop; this only needs
 * the links.
 */
export function extractLinks(html: string, pageUrl: URL): URL[] {
  const markup = html.replace(INERT, ' ');
  let base = pageUrl;
  const b = BASE.exec(markup);
  if (b) {
    try {
      base = new URL(decodeEntities((b[1] ?? b[2] ?? b[3]!).trim()), pageUrl);
    } catch {
      // An unusable <base>: links resolve against the page.
    }
  }
  const seen = new Set<string>();
  const out: URL[] = [];
  for (const m of markup.matchAll(ANCHOR)) {
    const href = decodeEntities((m[1] ?? m[2] ?? m[3]!).trim());
    if (href === '' || href.startsWith('#')) continue;
    let url: URL;
    try {
      url = new URL(href, base);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    url.hash = '';
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    out.push(url);
  }
  return out;
}
