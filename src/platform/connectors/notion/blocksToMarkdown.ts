import { escapeLineStarts, escapeText, linkTarget, richTextToMarkdown, type LinkResolver } from './richText.ts';
import { notionUrl, plainText, type Block, type BlockNode, type RichText } from './types.ts';

export interface PageMarkdown {
  markdown: string;
  /**
   * Block types on the page that Markdown cannot carry back (an uploaded file, a synced block,
   * columns…): pushing an edit of this page would lose them, so push refuses it.
   */
  lossy: string[];
}

/**
 * A page's blocks as GitHub-flavoured Markdown: headings, paragraphs, lists with their nesting,
 * to-dos, code with its language, quotes, callouts (`> 💡 text`), dividers, tables, toggles
 * (`<details>`), equations, images and files as links, child pages as links to their node.
 */
export function blocksToMarkdown(blocks: BlockNode[], links: LinkResolver = () => null): PageMarkdown {
  const lossy = new Set<string>();
  const markdown = renderBlocks(blocks, { links, lossy });
  return { markdown: markdown === '' ? '' : `${markdown}\n`, lossy: [...lossy].sort() };
}

interface Ctx {
  links: LinkResolver;
  lossy: Set<string>;
}

const LIST_TYPES = new Set(['bulleted_list_item', 'numbered_list_item', 'to_do']);

/** Blocks one after another: a blank line between them, none between items of one list. */
function renderBlocks(nodes: BlockNode[], ctx: Ctx): string {
  let out = '';
  let number = 0;
  let previous: string | null = null;
  for (const node of nodes) {
    const type = node.block.type;
    number = type === 'numbered_list_item' ? (previous === 'numbered_list_item' ? number + 1 : 1) : 0;
    const text = renderBlock(node, ctx, number);
    if (text === null) continue;
    const tight = previous !== null && LIST_TYPES.has(type) && LIST_TYPES.has(previous) && listKind(type) === listKind(previous);
    out += out === '' ? text : (tight ? '\n' : '\n\n') + text;
    previous = type;
  }
  return out;
}

/** Bullets and to-dos are one Markdown list (`- ` and `- [ ] `), numbered items another. */
function listKind(type: string): string {
  return type === 'numbered_list_item' ? 'ordered' : 'bullet';
}

function payload(block: Block): Record<string, unknown> {
  return (block[block.type] ?? {}) as Record<string, unknown>;
}

function inline(block: Block, ctx: Ctx): string {
  return escapeLineStarts(richTextToMarkdown(payload(block).rich_text as RichText[] | undefined, ctx.links));
}

/** Prefixes every line (`first` on the first one); blank lines get the prefix without its trailing spaces. */
function indent(text: string, prefix: string, first = prefix): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? first + line : line === '' ? prefix.trimEnd() : prefix + line))
    .join('\n');
}

function renderBlock(node: BlockNode, ctx: Ctx, number: number): string | null {
  const { block } = node;
  const p = payload(block);
  const children = () => renderBlocks(node.children, ctx);
  switch (block.type) {
    case 'paragraph':
    case 'heading_1':
    case 'heading_2':
    case 'heading_3': {
      const level = block.type === 'paragraph' ? 0 : Number(block.type.slice(-1));
      const text = level ? `${'#'.repeat(level)} ${inline(block, ctx).replace(/\n/g, ' ')}` : inline(block, ctx);
      // Empty paragraphs are Notion's spacing; Markdown has its own.
      if (text === '' && node.children.length === 0) return null;
      // Nested blocks under a paragraph or a toggleable heading have no Markdown form: they follow it.
      if (node.children.length === 0) return text;
      ctx.lossy.add(level ? 'toggle heading' : 'nested paragraph');
      return `${text}\n\n${children()}`;
    }
    case 'bulleted_list_item':
    case 'numbered_list_item':
    case 'to_do': {
      const marker =
        block.type === 'numbered_list_item' ? `${number}. ` : block.type === 'to_do' ? `- [${p.checked ? 'x' : ' '}] ` : '- ';
      const pad = ' '.repeat(block.type === 'numbered_list_item' ? marker.length : 2);
      const head = indent(inline(block, ctx), pad, marker);
      return node.children.length ? `${head}\n${indent(children(), pad)}` : head;
    }
    case 'toggle': {
      const summary = inline(block, ctx).replace(/\n/g, ' ');
      return `<details>\n<summary>${summary}</summary>\n\n${node.children.length ? `${children()}\n\n` : ''}</details>`;
    }
    case 'quote': {
      const body = node.children.length ? `${inline(block, ctx)}\n\n${children()}` : inline(block, ctx);
      return indent(body, '> ');
    }
    case 'callout': {
      const icon = p.icon as { type: string; emoji?: string } | null | undefined;
      if (icon && icon.type !== 'emoji') ctx.lossy.add('callout icon');
      const text = inline(block, ctx);
      const head = icon?.type === 'emoji' && icon.emoji ? `${icon.emoji} ${text}` : text;
      return indent(node.children.length ? `${head}\n\n${children()}` : head, '> ');
    }
    case 'code': {
      const code = plainText(p.rich_text as RichText[]);
      const longest = Math.max(2, ...(code.match(/^`+/gm) ?? []).map((f) => f.length));
      const fence = '`'.repeat(longest + 1);
      const language = p.language === 'plain text' || typeof p.language !== 'string' ? '' : p.language.replace(/\s+/g, '-');
      if (plainText(p.caption as RichText[]) !== '') ctx.lossy.add('code caption');
      return `${fence}${language}\n${code}\n${fence}`;
    }
    case 'equation':
      return `$$\n${String(p.expression ?? '')}\n$$`;
    case 'divider':
      return '---';
    case 'table':
      return renderTable(node, ctx);
    case 'image': {
      const { url, hosted } = fileUrl(p);
      if (hosted) ctx.lossy.add('uploaded image');
      return `![${escapeText(plainText(p.caption as RichText[]))}](${linkTarget(url)})`;
    }
    case 'file':
    case 'pdf':
    case 'video':
    case 'audio': {
      const { url } = fileUrl(p);
      ctx.lossy.add(block.type);
      const label = plainText(p.caption as RichText[]) || (typeof p.name === 'string' ? p.name : '') || fileName(url) || block.type;
      return `[${escapeText(label)}](${linkTarget(url)})`;
    }
    case 'bookmark':
    case 'embed':
    case 'link_preview': {
      ctx.lossy.add(block.type);
      const url = String(p.url ?? '');
      return `[${escapeText(plainText(p.caption as RichText[]) || url)}](${linkTarget(url)})`;
    }
    case 'child_page':
    case 'child_database':
      // Kept in place when the page's text is pushed back (see push.ts): not lossy.
      return `[${escapeText(String(p.title ?? '') || 'Untitled')}](${linkTarget(ctx.links(block.id) ?? notionUrl(block.id))})`;
    case 'link_to_page': {
      ctx.lossy.add(block.type);
      const target = String(p.page_id ?? p.database_id ?? '');
      return `[↗ linked page](${linkTarget(ctx.links(target) ?? notionUrl(target))})`;
    }
    case 'column_list':
    case 'column':
    case 'synced_block':
      // Their content is what matters; the layout (or the sync) has no Markdown form.
      ctx.lossy.add(block.type);
      return node.children.length ? children() : null;
    default:
      ctx.lossy.add(block.type);
      return `<!-- notion: ${block.type.replace(/--/g, '')} -->`;
  }
}

function renderTable(node: BlockNode, ctx: Ctx): string {
  const p = payload(node.block);
  const rows = node.children
    .filter((c) => c.block.type === 'table_row')
    .map((c) => ((payload(c.block).cells as RichText[][] | undefined) ?? []).map((cell) => tableCell(cell, ctx)));
  const width = Math.max(Number(p.table_width) || 0, ...rows.map((r) => r.length), 1);
  const pad = (r: string[]) => [...r, ...Array<string>(width - r.length).fill('')];
  // GFM tables always have a header row: a Notion table without one shows its first row there.
  if (!p.has_column_header) ctx.lossy.add('table without header row');
  if (p.has_row_header) ctx.lossy.add('table row header');
  const [header = [], ...body] = rows;
  const line = (r: string[]) => `| ${pad(r).join(' | ')} |`;
  return [line(header), `|${' --- |'.repeat(width)}`, ...body.map(line)].join('\n');
}

function tableCell(cell: RichText[], ctx: Ctx): string {
  return richTextToMarkdown(cell, ctx.links).replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/** A file object's address: `external` (any URL) or `file` (hosted by Notion, signed, expires in an hour). */
function fileUrl(p: Record<string, unknown>): { url: string; hosted: boolean } {
  if (p.type === 'file') return { url: String((p.file as { url?: string } | undefined)?.url ?? ''), hosted: true };
  return { url: String((p.external as { url?: string } | undefined)?.url ?? ''), hosted: false };
}

function fileName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}
