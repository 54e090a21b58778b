import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ContentStore, NodeInfo, TreeNode } from '../content/contentStore.ts';
import { Lru } from '../content/lru.ts';
import { invalidField } from '../errors/domainError.ts';
import { resolvePointer } from '../util/jsonPointer.ts';
import { escapeHtml, FILE_CSP, htmlPage, indexPage, PAGE_CSP } from './htmlPage.ts';
import { markdownRenderer, type MarkdownRenderer } from './markdownRenderer.ts';
import type { PublicTarget } from './publicTarget.ts';

/** The front matter parser (yaml, ~65 ms of CPU to load) is imported with the renderer, by the first Markdown page. */
let frontMatterModule: Promise<typeof import('../util/frontMatter.ts')> | undefined;
const loadFrontMatter = () => (frontMatterModule ??= import('../util/frontMatter.ts'));

export type PublicFormat = 'html' | 'md' | 'json';

export interface PublicRequest {
  format?: PublicFormat;
  pointer?: string;
  /** The public address as asked (key or slug), and where it is mounted: links of folder pages stay under it. */
  address: string;
  base: string;
}

/** A page, a document or a tree: answered whole. */
export interface BodyAnswer {
  kind: 'body';
  contentType: string;
  body: string | Buffer;
  etag: string;
  csp: string;
}

/** A file's bytes: answered with Range support. */
export interface FileAnswer {
  kind: 'file';
  size: number;
  slice(start: number, end: number): Buffer | Readable;
  contentType: string;
  filename: string;
  disposition: 'inline' | 'attachment';
  etag: string;
  csp: string;
}

export type PublicAnswer = BodyAnswer | FileAnswer;

/** Rendered pages kept by node and content: enough for a site's pages, bounded in bytes. */
const RENDER_CACHE_ENTRIES = 512;
const RENDER_CACHE_BYTES = 32 * 1024 * 1024;
/** The most nodes a folder's `?format=json` tree lists (`truncated` says when there were more). */
const TREE_LIMIT = 2000;

/** Media types a browser may show in place; anything else (HTML, SVG scripts, …) is offered as a download. */
const inlineTypes = /^(image\/(png|jpeg|gif|webp|avif)|text\/plain|text\/csv|application\/pdf|application\/json|audio\/[\w.+-]+|video\/[\w.+-]+)(;|$)/i;

type Content = Pick<ContentStore, 'readContent' | 'versionContent' | 'openBlob' | 'listChildren' | 'treePage'>;

/**
 * What a public address answers, by node type and `format`: Markdown as a sanitized HTML page
 * (rendered once per node and content, then from memory) or as its text; JSON whole or one member
 * by JSON Pointer; a file's bytes; a folder as an index page or a JSON tree. A pinned publish
 * serves that version's content.
 */
export class PublicReader {
  private readonly rendered = new Lru<string, string>(RENDER_CACHE_ENTRIES, RENDER_CACHE_BYTES);

  constructor(private readonly content: Content) {}

  async answer(target: PublicTarget, req: PublicRequest): Promise<PublicAnswer> {
    const { node, pinned } = target;
    const type = pinned?.type ?? node.type;
    if (req.pointer !== undefined && type !== 'json') throw invalidField('pointer', `pointer applies to json nodes; this is a ${type} node`);
    const formats: Record<string, readonly (PublicFormat | undefined)[]> = {
      markdown: [undefined, 'html', 'md'],
      json: [undefined, 'json'],
      folder: [undefined, 'html', 'json'],
      file: [undefined],
    };
    if (!formats[type]!.includes(req.format)) {
      throw invalidField('format', `a ${type} node is served ${type === 'file' ? 'as its bytes (no format)' : `as ${formats[type]!.filter(Boolean).join(' or ')}`}`);
    }
    if (type === 'folder') return this.folder(target, req);
    const blobId = pinned?.blobId ?? node.contentHash!;
    if (type === 'file') return this.file(node, blobId);
    if (type === 'markdown' && req.format !== 'md') return this.page(target, blobId);
    const bytes = await this.bytes(target);
    if (type === 'markdown') return { kind: 'body', contentType: 'text/markdown; charset=utf-8', body: bytes, etag: `${blobId}.md`, csp: PAGE_CSP };
    if (req.pointer === undefined || req.pointer === '') return { kind: 'body', contentType: 'application/json; charset=utf-8', body: bytes, etag: `${blobId}.json`, csp: PAGE_CSP };
    const member = resolvePointer(JSON.parse(bytes.toString('utf8')), req.pointer);
    const digest = createHash('sha256').update(req.pointer).digest('hex').slice(0, 16);
    return { kind: 'body', contentType: 'application/json; charset=utf-8', body: JSON.stringify(member), etag: `${blobId}.json.${digest}`, csp: PAGE_CSP };
  }

  private async bytes(target: PublicTarget): Promise<Buffer> {
    const { node, pinned } = target;
    if (pinned) return (await this.content.versionContent(node.projectId, { id: node.id }, pinned.version)).bytes;
    return (await this.content.readContent(node.projectId, { id: node.id })).bytes;
  }

  private async page(target: PublicTarget, blobId: string): Promise<BodyAnswer> {
    const { node } = target;
    const key = `${node.id}@${blobId}`;
    let html = this.rendered.get(key);
    if (html === undefined) {
      const [renderer, { frontMatter }, bytes] = await Promise.all([markdownRenderer(), loadFrontMatter(), this.bytes(target)]);
      html = markdownPage(renderer, frontMatter, node.name, bytes.toString('utf8'));
      this.rendered.set(key, html, Buffer.byteLength(html));
    }
    return { kind: 'body', contentType: 'text/html; charset=utf-8', body: html, etag: `${blobId}.html`, csp: PAGE_CSP };
  }

  private async file(node: NodeInfo, blobId: string): Promise<FileAnswer> {
    const source = await this.content.openBlob(node.projectId, blobId);
    const contentType = node.mimeType ?? 'application/octet-stream';
    return {
      kind: 'file',
      size: source.size,
      slice: source.stream,
      contentType,
      filename: node.name,
      disposition: inlineTypes.test(contentType) ? 'inline' : 'attachment',
      etag: blobId,
      csp: FILE_CSP,
    };
  }

  private async folder(target: PublicTarget, req: PublicRequest): Promise<BodyAnswer> {
    const { node, relPath } = target;
    const href = (rel: string) => `${req.base}/${encodeURIComponent(req.address)}${rel ? '/' + rel.split('/').map(encodeURIComponent).join('/') : ''}`;
    const relOf = (n: { path: string }) => n.path.slice(target.root.path.length + 1);
    const etag = `${node.contentHash ?? 'empty'}.${req.format ?? 'html'}.${createHash('sha256').update(href(relPath)).digest('hex').slice(0, 16)}`;
    if (req.format === 'json') {
      const page = await this.content.treePage(node.projectId, node.path, { maxDepth: -1, limit: TREE_LIMIT });
      const present = (t: TreeNode): unknown => ({
        name: t.name,
        path: relOf(t),
        type: t.type,
        size: t.size,
        updated_at: t.updatedAt,
        url: href(relOf(t)),
        ...(t.type === 'folder' ? { children: (t.children ?? []).map(present) } : {}),
      });
      const tree = { name: node.name, path: relPath, type: 'folder', url: href(relPath), children: (page.root.children ?? []).map(present), truncated: page.nextCursor !== null };
      return { kind: 'body', contentType: 'application/json; charset=utf-8', body: JSON.stringify(tree), etag, csp: PAGE_CSP };
    }
    const children = this.content.listChildren(node.projectId, node.path).filter((c) => c.state === 'active');
    const entries = children.map((c) => ({ name: c.name, href: href(relOf(c)), type: c.type, size: c.size, updatedAt: c.updatedAt }));
    const parent = relPath === '' ? null : href(relPath.split('/').slice(0, -1).join('/'));
    return { kind: 'body', contentType: 'text/html; charset=utf-8', body: indexPage(node.name, entries, parent), etag, csp: PAGE_CSP };
  }
}

/**
 * A Markdown page: its front matter as a table of properties above the text (malformed: the text
 * as it is, with a warning); its title the front matter's `title`, else the first heading, else
 * the file name, and a heading of that title when the text opens with none.
 */
function markdownPage(renderer: MarkdownRenderer, frontMatter: typeof import('../util/frontMatter.ts').frontMatter, name: string, text: string): string {
  const fm = frontMatter(text);
  const heading = renderer.firstHeading(fm.body);
  const title = (fm.kind === 'ok' ? fm.title : null) ?? heading ?? titleOf(name);
  const parts: string[] = [];
  if (fm.kind === 'invalid') {
    parts.push(`<p class="warning" role="note">The front matter could not be read (${escapeHtml(fm.error)}); it is shown as text.</p>`);
    if (fm.raw) parts.push(`<pre class="front-matter-text">${escapeHtml(fm.raw)}</pre>`);
  }
  if (fm.kind === 'ok' && fm.properties.length > 0) {
    const rows = fm.properties.map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
    parts.push(`<table class="front-matter" aria-label="Properties"><tbody>${rows}</tbody></table>`);
  }
  if (heading === null || (fm.kind === 'ok' && fm.title !== null && !/^\s*#/.test(fm.body))) parts.push(`<h1>${escapeHtml(title)}</h1>`);
  parts.push(renderer.render(fm.body));
  return htmlPage(title, parts.join('\n'));
}

/** A page's title: the file name without its Markdown extension. */
const titleOf = (name: string) => name.replace(/\.(md|markdown)$/i, '') || name;
