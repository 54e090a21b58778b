import { createRequire } from 'node:module';

/**
 * DOMPurify and jsdom, loaded without their type packages: those pull the whole browser DOM
 * library into every file of the project (as src/ingest/converters/dom.ts explains). The little
 * used here is typed by hand.
 */
interface SanitizedElement {
  tagName: string;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
}
interface Purifier {
  addHook(hook: 'afterSanitizeAttributes', fn: (node: SanitizedElement) => void): void;
  sanitize(html: string, config: Record<string, unknown>): string;
}
const require = createRequire(import.meta.url);

/** Turns Markdown into HTML that can run nothing. */
export interface MarkdownRenderer {
  render(markdown: string): string;
  /** The text of the document's first heading (any level), without its inline markup; null without one. */
  firstHeading(markdown: string): string | null;
}

interface LexedToken {
  type: string;
  text?: string;
  tokens?: LexedToken[];
}

/** A token's words: its inline children's text, or its own. */
function plainText(t: LexedToken): string {
  return t.tokens ? t.tokens.map(plainText).join('') : (t.text ?? '');
}

/** What the sanitizer removes beyond DOMPurify's defaults (scripts, event handlers, `javascript:` URLs): styling and forms that could imitate the service. */
const SANITIZE = {
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'iframe', 'frame', 'object', 'embed', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'formaction'],
  ALLOW_DATA_ATTR: false,
};

let loading: Promise<MarkdownRenderer> | null = null;

/**
 * The renderer: marked (GitHub-flavoured Markdown; it keeps raw HTML, so its output is never
 * trusted) then DOMPurify over a jsdom window. Loaded on first use and shared: jsdom takes
 * ~100 ms to start, which a server that never publishes Markdown should not pay at start-up.
 */
export function markdownRenderer(): Promise<MarkdownRenderer> {
  loading ??= (async () => {
    const { Marked } = await import('marked');
    const createDOMPurify = require('dompurify') as (window: unknown) => Purifier;
    const { JSDOM } = require('jsdom') as { JSDOM: new (html: string) => { window: unknown } };
    const marked = new Marked({ gfm: true });
    const purify = createDOMPurify(new JSDOM('').window);
    // Links leave without telling the target where they came from, and never drive this page.
    purify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A' && node.hasAttribute('href')) node.setAttribute('rel', 'noopener noreferrer nofollow');
    });
    return {
      render: (markdown) => purify.sanitize(marked.parse(markdown, { async: false }), SANITIZE),
      firstHeading: (markdown) => {
        const heading = (marked.lexer(markdown) as LexedToken[]).find((t) => t.type === 'heading');
        const text = heading ? plainText(heading).trim() : '';
        return text === '' ? null : text;
      },
    };
  })();
  loading.catch(() => (loading = null));
  return loading;
}
