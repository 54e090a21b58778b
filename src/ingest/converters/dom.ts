import { createRequire } from 'node:module';

/*
 * jsdom, loaded without its type package: @types/jsdom pulls the whole DOM library into every
 * file of the project (`/// <reference lib="dom" />`), where it changes what `fetch` and other
 * Node globals accept. These are the parts of the DOM the converters use.
 */

export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  firstChild: DomNode | null;
  childNodes: Iterable<DomNode>;
  ownerDocument: DomDocument;
  remove(): void;
  replaceWith(...nodes: DomNode[]): void;
  appendChild(node: DomNode): DomNode;
}

export interface DomElement extends DomNode {
  attributes: Iterable<{ name: string; value: string }>;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  querySelectorAll(selectors: string): Iterable<DomElement>;
}

export interface DomDocument {
  title: string;
  body: DomElement | null;
  documentElement: DomElement;
  createElement(tag: string): DomElement;
  createTextNode(text: string): DomNode;
}

export interface DomTable extends DomElement {
  rows: Iterable<DomElement & { cells: Iterable<DomElement> }> & ArrayLike<DomElement & { cells: Iterable<DomElement> }>;
}

export interface ParsedHtml {
  document: DomDocument;
  /** Frees the document's window. */
  close(): void;
}

interface JsdomModule {
  JSDOM: new (html: string | Buffer, options: { url?: string; contentType?: string; virtualConsole: unknown }) => { window: { document: DomDocument; close(): void } };
  VirtualConsole: new () => unknown;
}

let jsdom: JsdomModule | null = null;

/**
 * An HTML document parsed by jsdom: no script runs, nothing is fetched, and nothing is printed
 * (a silent virtual console: jsdom reports stylesheets it cannot parse there). A Buffer is
 * decoded as a browser would (BOM, `<meta charset>`, else windows-1252); `url` is the base for
 * relative links.
 */
export function parseHtml(html: string | Buffer, url?: string): ParsedHtml {
  jsdom ??= createRequire(import.meta.url)('jsdom') as JsdomModule;
  const dom = new jsdom.JSDOM(html, { url, contentType: 'text/html', virtualConsole: new jsdom.VirtualConsole() });
  return { document: dom.window.document, close: () => dom.window.close() };
}
