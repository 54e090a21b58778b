import test from 'ava';
import { writeFileSync } from 'node:fs';
import { convert } from '../../src/ingest/converters/index.ts';
import { htmlToMarkdown } from '../../src/ingest/converters/html.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('html');
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 17}`).join(' ');

const page = `<!doctype html><html><head><title>Ingestion notes</title><meta name="author" content="Jane Doe">
<style>.x{</style><script>document.write('never')</script></head><body>
<nav><a href="/home">Home</a> <a href="/about">About</a></nav>
<article><h1>Ingestion notes</h1>
<p>${words(120)}</p>
<p>See <a href="docs/next.html">the next page</a> and <img src="/img/chart.png" alt="chart">.</p>
<table><tr><td>Format</td><td>Library</td></tr><tr><td>PDF | scans</td><td><p>unpdf</p><p>tesseract</p></td></tr></table>
<p>${words(80)}</p></article>
<footer>Copyright footer text</footer></body></html>`;

test('a web page becomes its article as Markdown, with front matter and absolute links', (t) => {
  const { markdown, title, byline } = htmlToMarkdown(page, { sourceUrl: 'https://example.com/blog/post.html' });
  t.is(title, 'Ingestion notes');
  t.is(byline, 'Jane Doe');
  t.true(markdown.startsWith('---\ntitle: "Ingestion notes"\nbyline: "Jane Doe"\nsource_url: "https://example.com/blog/post.html"\n---\n\n'));
  t.true(markdown.includes('[the next page](https://example.com/blog/docs/next.html)'));
  t.true(markdown.includes('![chart](https://example.com/img/chart.png)'));
  t.true(markdown.includes('| Format | Library |\n| --- | --- |\n| PDF \\| scans | unpdf tesseract |'));
  for (const gone of ['Home', 'Copyright footer', 'never', '.x{']) t.false(markdown.includes(gone), gone);
});

test('a fragment with no article keeps its whole body; links stay relative without a source URL', (t) => {
  t.is(htmlToMarkdown('<p>Short <a href="x.html">link</a></p>', { sourceUrl: 'https://example.com/a/' }).markdown, '---\nsource_url: "https://example.com/a/"\n---\n\nShort [link](https://example.com/a/x.html)\n');
  t.is(htmlToMarkdown('<p>Short <a href="x.html">link</a></p>').markdown, 'Short [link](x.html)\n');
});

test('an HTML file converts through convert(), its charset read from the page', async (t) => {
  const file = work.path('page.html');
  writeFileSync(file, Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"><title>Caf'), Buffer.from([0xe9]), Buffer.from('</title></head><body><p>ok</p></body></html>')]));
  const out = await convert({ file, name: 'page.html', mode: 'markdown', limits, sourceUrl: 'https://example.org/p' });
  t.deepEqual(out.nodes, [{ name: 'page.md', type: 'markdown', content: '---\ntitle: "Café"\nsource_url: "https://example.org/p"\n---\n\nok\n' }]);
});
