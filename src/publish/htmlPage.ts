/**
 * The shell of every public HTML page: readable typography in an inline style sheet (the page's
 * Content-Security-Policy allows inline styles and nothing else to run), the body given already
 * sanitized or built from escaped text.
 */

/** Sent with every public page: no script, no plug-in, no frame, no form, no base change; images from https, data: and the service itself. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src https: data: 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Sent with file bytes: a document of any type opened from a publish runs sandboxed (no script, an origin of its own). */
export const FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src https: data: 'self'; media-src 'self'; sandbox";

const STYLE = `
:root{color-scheme:light dark}
body{margin:0;font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}a{color:#4493f8}code,pre{background:#161b22!important}th,td{border-color:#30363d!important}}
main{max-width:46rem;margin:0 auto;padding:2rem 1.25rem 4rem}
h1,h2,h3{line-height:1.25;margin:1.6em 0 .6em}h1{font-size:2em}h2{font-size:1.5em}
a{color:#0969da}img{max-width:100%}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:.15em .3em;border-radius:4px}
pre{background:#f6f8fa;padding:1rem;overflow:auto;border-radius:6px}pre code{padding:0;background:none}
blockquote{margin:0;padding:0 1em;border-left:.25em solid #d0d7de;color:#656d76}
table{border-collapse:collapse;display:block;overflow:auto}th,td{border:1px solid #d0d7de;padding:.4em .8em}
table.front-matter{margin:0 0 1.5em;font-size:.9em}table.front-matter th{text-align:left;background:#f6f8fa}
.warning{border-left:.25em solid #d4a72c;padding:.4em .8em;background:#fff8c5;color:#3b2300}
ul.index{list-style:none;padding:0}ul.index li{padding:.35em 0;border-bottom:1px solid #d0d7de33;display:flex;gap:1em}
ul.index .meta{margin-left:auto;color:#656d76;font-size:.875em}
`;

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!);

/** A complete page; `body` must already be safe HTML. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface IndexEntry {
  name: string;
  href: string;
  type: string;
  size: number;
  updatedAt: string;
}

/** The index page of a published folder: its children, each a link under the same public address. */
export function indexPage(title: string, entries: IndexEntry[], parentHref: string | null): string {
  const items = entries.map(
    (e) =>
      `<li><a href="${escapeHtml(e.href)}">${escapeHtml(e.name)}${e.type === 'folder' ? '/' : ''}</a><span class="meta">${escapeHtml(
        e.type === 'folder' ? 'folder' : `${e.type}, ${formatSize(e.size)}`,
      )} · ${escapeHtml(e.updatedAt.slice(0, 10))}</span></li>`,
  );
  const up = parentHref === null ? '' : `<p><a href="${escapeHtml(parentHref)}">↑ up</a></p>\n`;
  const list = items.length ? `<ul class="index">\n${items.join('\n')}\n</ul>` : '<p>This folder is empty.</p>';
  return htmlPage(title, `<h1>${escapeHtml(title)}</h1>\n${up}${list}`);
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
