import test from 'ava';
import { fileText, htmlText } from '../../src/search/fileText.ts';

test('htmlText keeps what a reader sees: no scripts, styles, comments, tags or attributes; blocks break lines; references decoded', (t) => {
  const html = `<!DOCTYPE html><html><head><title>T&iacute;tle</title><SCRIPT type="x">if (a < b) alert("</p>")</SCRIPT>
<style>p{}</style><!-- a <b>comment</b> --></head><body><p title="x > y">one<b>two</b> &amp; three</p>
<noscript>enable js</noscript><template><p>later</p></template><ul><li>a&#x20AC;</li><li>b&#8364;</li></ul>
x < y and &unknown; stay</body></html>`;
  t.is(htmlText(html), 'T&iacute;tle\n\nonetwo & three\n\na€\n\nb€\n\nx < y and &unknown; stay');
});

test('htmlText ends at an unterminated script or comment instead of indexing it as text', (t) => {
  t.is(htmlText('<p>kept</p><script>var secret = 1;'), 'kept');
  t.is(htmlText('<p>kept</p><!-- never closed <p>hidden</p>'), 'kept');
  t.is(htmlText('<p>kept</p><scriptish>shown</scriptish>'), 'kept\nshown');
});

test('fileText: documents, archives and media give no text, even a PDF under another name; HTML its visible text; other text as is', (t) => {
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Title (words) >> endobj\n');
  t.is(fileText('application/pdf', pdf), null);
  t.is(fileText('application/octet-stream', pdf), null);
  t.is(fileText('text/plain', pdf), null);
  for (const mime of ['application/zip', 'image/svg+xml', 'audio/mpeg', 'video/mp4', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document']) {
    t.is(fileText(mime, Buffer.from('<svg><text>words</text></svg>')), null, mime);
  }
  t.is(fileText('text/html', Buffer.from('<p>hello <i>there</i></p><script>x()</script>')), 'hello there');
  t.is(fileText('text/csv', Buffer.from('a,b\n1,2\n')), 'a,b\n1,2\n');
  t.is(fileText('application/octet-stream', Buffer.from([0, 1, 2])), null);
});
