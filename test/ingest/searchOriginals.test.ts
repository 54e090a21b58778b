import test from 'ava';
import { readFileSync } from 'node:fs';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { indexReady, search } from '../tools/helpers.ts';
import { writePdf } from './fixtures/pdf.ts';
import { workDir } from './fixtures/workDir.ts';
import { submitFiles, waitAll } from './ingestClient.ts';

// Kept originals and search: the index holds the converted text, never HTML markup or PDF internals.
const work = workDir('search-originals');

let server: TestServer;
let token: string;
let projectId: string;
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  ({ projectId } = await defaultProject(server, token));
});
test.after.always(async () => server?.stop());

const PAGE = `<!doctype html><html><head><title>Kept page</title>
<script>var trackingcodeword = "loaded"; if (a < b) { pixel("</p>"); }</script>
<style>.hiddenstyleword { color: red }</style></head>
<body><article><h1>Visible heading</h1>
<p class="attributeword">The visible paragraph mentions pangolins and caf&eacute; &amp; tea.</p>
<p>A second paragraph, long enough for the article to be found by Readability, about the pangolin's diet.</p>
</article></body></html>`;

test('with keep_original, search finds the converted text but nothing of the HTML markup or the PDF internals', async (t) => {
  const pdf = work.path('report.pdf');
  writePdf(pdf, [['Quarterly figures for the aardvark programme']], { title: 'internaltitleword' });
  const res = await submitFiles(server, token, { project_id: projectId, path: 'kept', keep_original: 'true' }, [
    { name: 'page.html', content: PAGE, type: 'text/html' },
    { name: 'report.pdf', content: readFileSync(pdf), type: 'application/pdf' },
  ]);
  t.is(res.status, 202, JSON.stringify(res.body));
  const tasks = await waitAll(server, token, res.body.data.tasks.map((x: any) => x.id));
  t.deepEqual(tasks.map((x) => x.status), ['succeeded', 'succeeded'], JSON.stringify(tasks.map((x) => x.error)));
  t.deepEqual(
    tasks.flatMap((x) => x.result.nodes.map((n: any) => n.path)),
    ['kept/page.md', 'kept/page.html', 'kept/report.md', 'kept/report.pdf'],
    'the originals are stored beside their results',
  );

  const made = await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'kept' } });
  t.is(made.status, 202);
  const toolId = made.body.data.tool.id as string;
  await indexReady(server, token, toolId);
  const paths = async (query: string) => {
    const r = await search(server, token, toolId, { query, top_k: 20 });
    t.is(r.status, 200, JSON.stringify(r.body));
    return (r.body.data.result.results as { path: string }[]).map((x) => x.path).sort();
  };

  t.true((await paths('pangolins')).includes('kept/page.md'), 'the converted page is found');
  t.true((await paths('aardvark')).includes('kept/report.md'), 'the converted PDF is found');
  for (const word of ['trackingcodeword', 'pixel', 'hiddenstyleword', 'attributeword', 'doctype']) t.deepEqual(await paths(word), [], `${word}: HTML markup is not indexed`);
  for (const word of ['internaltitleword', 'Helvetica', 'endobj', 'xref']) t.deepEqual(await paths(word), [], `${word}: PDF internals are not indexed`);
  const html = (await paths('pangolins')).filter((p) => p.endsWith('.html'));
  t.deepEqual(html, ['kept/page.html'], "the kept page is indexed by its visible text only");
});
