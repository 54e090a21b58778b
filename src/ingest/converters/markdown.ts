import { createRequire } from 'node:module';
import type TurndownService from 'turndown';
import type { DomElement, DomTable } from './dom.ts';

let service: TurndownService | null = null;

/**
 * The one HTML → Markdown converter (ATX headings, fenced code, GFM tables and strikethrough).
 * turndown (~70 ms of CPU to load, with its own DOM) is required on first use, as jsdom is
 * (dom.ts): the tables and tidying below need neither.
 */
function turndown(): TurndownService {
  if (service) return service;
  const require = createRequire(import.meta.url);
  const Turndown = require('turndown') as typeof TurndownService;
  const { gfm } = require('turndown-plugin-gfm') as typeof import('turndown-plugin-gfm');
  service = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  service.use(gfm);
  // A `|` in text would end a table cell; `\|` reads as `|` everywhere else in Markdown.
  const escape = service.escape.bind(service);
  service.escape = (text: string) => escape(text).replace(/\|/g, '\\|');
  service.remove(['script', 'style', 'noscript', 'template']);
  return service;
}

/** Markdown of an element of a parsed document (jsdom); its tables are reshaped in place first. */
export function elementToMarkdown(root: DomElement): string {
  for (const table of [...root.querySelectorAll('table')]) prepareTable(table as DomTable);
  return tidy(turndown().turndown(root as unknown as TurndownService.Node));
}

/**
 * The GFM plugin writes a Markdown table only for a table whose first row is header cells, and
 * a cell's paragraphs would break the row onto several lines; other tables stay as raw HTML.
 * Word and most web tables have no `<th>`, so: the first row becomes the header, block content
 * inside a cell is flattened onto one line, and whitespace between cells (which the plugin
 * counts as cells) goes.
 */
function prepareTable(table: DomTable): void {
  const doc = table.ownerDocument;
  for (const row of [...table.rows]) {
    for (const node of [...row.childNodes]) if (node.nodeType === 3 && !node.textContent?.trim()) node.remove();
    for (const cell of [...row.cells]) {
      for (const block of [...cell.querySelectorAll('p, div, li, h1, h2, h3, h4, h5, h6, table')]) {
        block.replaceWith(doc.createTextNode(` ${block.textContent?.trim() ?? ''} `));
      }
      for (const br of [...cell.querySelectorAll('br')]) br.replaceWith(doc.createTextNode(' '));
    }
  }
  const first = table.rows[0];
  if (!first || [...first.cells].every((c) => c.nodeName === 'TH')) return;
  for (const td of [...first.cells]) {
    const th = doc.createElement('th');
    while (td.firstChild) th.appendChild(td.firstChild);
    for (const attr of [...td.attributes]) th.setAttribute(attr.name, attr.value);
    td.replaceWith(th);
  }
}

/** A Markdown table: `headers`, then one line per row; cells on one line, pipes escaped. */
export function markdownTable(headers: string[], rows: unknown[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [line(headers.map(cellText)), line(headers.map(() => '---'))];
  for (const row of rows) out.push(line(headers.map((_, i) => cellText(row[i]))));
  return out.join('\n') + '\n';
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** No runs of blank lines, one final newline. */
export function tidy(markdown: string): string {
  return markdown.replace(/\n{3,}/g, '\n\n').trim() + '\n';
}
