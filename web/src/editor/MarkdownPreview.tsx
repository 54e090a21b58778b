import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { opensWithFrontMatter } from '../../../src/util/frontMatterFence.ts';

type FrontMatterModule = typeof import('../../../src/util/frontMatter.ts');

/**
 * Markdown rendered as the reader will see it. marked keeps raw HTML (an `onerror`, a
 * `<script>`), so the result is always sanitized by DOMPurify before it reaches the page. YAML
 * front matter shows as a table of properties above the text (the same module as published
 * pages, loaded only for documents that have some); malformed, as text with a warning.
 */
export function MarkdownPreview({ source }: { source: string }) {
  const fenced = opensWithFrontMatter(source);
  const [parser, setParser] = useState<FrontMatterModule | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    if (fenced && !parser) import('../../../src/util/frontMatter.ts').then(setParser, (e: Error) => setLoadError(e.message));
  }, [fenced]);
  const fm = useMemo(() => (fenced && parser ? parser.frontMatter(source) : null), [fenced, parser, source]);
  const body = fm ? fm.body : source;
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(body, { gfm: true, async: false })), [body]);
  return (
    <article class="preview" aria-label="Rendered Markdown">
      {fm?.kind === 'invalid' && (
        <p class="warning" role="note">
          The front matter could not be read ({fm.error}); it is shown as text.
        </p>
      )}
      {fm?.kind === 'invalid' && fm.raw && <pre class="front-matter-text">{fm.raw}</pre>}
      {loadError && <p class="warning" role="note">The front matter could not be shown: {loadError}</p>}
      {fm?.kind === 'ok' && fm.properties.length > 0 && (
        <table class="front-matter" aria-label="Properties">
          <tbody>
            {fm.properties.map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div dangerouslySetInnerHTML={{ __html: html }} />
    </article>
  );
}
