import { readFile } from 'node:fs/promises';
import { Readability } from '@mozilla/readability';
import type { ConvertInput, ConvertOutput } from './converter.ts';
import { parseHtml, type DomElement, type DomNode } from './dom.ts';
import { elementToMarkdown } from './markdown.ts';
import { outputName } from './names.ts';

export interface HtmlMarkdown {
  /** The Markdown with its front matter. */
  markdown: string;
  title: string | null;
  byline: string | null;
}

/**
 * A web page as Markdown: Readability keeps the article (no navigation, ads, footers; the whole
 * body when it finds no article), turndown writes it with GFM tables, and YAML front matter
 * carries title, byline, site name, publication time and the source URL. With `sourceUrl`,
 * relative links and images become absolute. Bytes are decoded as a browser would (BOM, then
 * `<meta charset>`, else windows-1252); scripts never run and nothing is fetched (dom.ts). Used for
 * uploaded HTML files and for pages fetched by URL ingestion.
 */
export function htmlToMarkdown(html: string | Buffer, options: { sourceUrl?: string } = {}): HtmlMarkdown {
  const parsed = parseHtml(html, options.sourceUrl);
  const doc = parsed.document;
  try {
    const pageTitle = doc.title.trim() || null;
    const article = new Readability<DomNode>(doc as never, { serializer: (node) => node as DomNode }).parse();
    let root: DomElement;
    if (article?.content && article.content.nodeType === 1) {
      root = article.content as DomElement;
    } else {
      root = doc.body ?? doc.documentElement;
      if (options.sourceUrl) absolutize(root);
    }
    const title = article?.title?.trim() || pageTitle;
    const byline = article?.byline?.trim() || null;
    const front = frontMatter({
      title,
      byline,
      site_name: article?.siteName?.trim() || null,
      published_time: article?.publishedTime?.trim() || null,
      source_url: options.sourceUrl ?? null,
    });
    return { markdown: front + elementToMarkdown(root), title, byline };
  } finally {
    parsed.close();
  }
}

/** Readability makes links absolute itself; the whole-body fallback needs it done here. */
function absolutize(root: DomElement): void {
  for (const a of root.querySelectorAll('a[href]')) a.setAttribute('href', (a as DomElement & { href: string }).href);
  for (const img of root.querySelectorAll('img[src]')) img.setAttribute('src', (img as DomElement & { src: string }).src);
}

/** YAML front matter of the fields that have a value; values as JSON strings, which YAML reads as double-quoted scalars. */
function frontMatter(fields: Record<string, string | null>): string {
  const lines = Object.entries(fields)
    .filter(([, v]) => v !== null && v !== '')
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  return lines.length ? `---\n${lines.join('\n')}\n---\n\n` : '';
}

export async function convertHtml(input: ConvertInput): Promise<ConvertOutput> {
  const { markdown } = htmlToMarkdown(await readFile(input.file), { sourceUrl: input.sourceUrl });
  return { nodes: [{ name: outputName(input.name, 'md'), type: 'markdown', content: markdown }], warnings: [] };
}
