import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'preact/hooks';

/**
 * Markdown rendered as the reader will see it. marked keeps raw HTML (an `onerror`, a
 * `<script>`), so the result is always sanitized by DOMPurify before it reaches the page.
 */
export function MarkdownPreview({ source }: { source: string }) {
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(source, { gfm: true, async: false })), [source]);
  return <article class="preview" aria-label="Rendered Markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
