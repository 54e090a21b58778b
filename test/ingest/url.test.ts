import test from 'ava';
import { metadataCount } from '../helpers/metadata.ts';
import { sql } from 'kysely';
import { readFileSync } from 'node:fs';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { writePdf } from './fixtures/pdf.ts';
import { workDir } from './fixtures/workDir.ts';
import { waitTask } from './ingestClient.ts';
import { html, startSite, type Site } from './site.ts';

// URL ingestion against local web sites (loopback, allowed with CNS_URL_FETCH_ALLOW_PRIVATE):
// one page, a breadth-first crawl within depth / max_pages / same_site, a non-HTML answer, and
// the outbound guard refusing a private address when it is not allowed.
let server: TestServer;
let token: string;
let projectId: string;
let site: Site;
let other: Site;
const work = workDir('url');

test.before(async () => {
  server = await startTestServer({}, { CNS_URL_FETCH_ALLOW_PRIVATE: 'true' });
  token = (await server.login()).token;
  ({ projectId } = await defaultProject(server, token));
  site = await startSite();
  other = await startSite();
  site.page(
    '/',
    {
      body: html(
        'Home page',
        `<h1>Welcome home</h1><p>The start of the site, with links.</p>
         <a href="/a">A</a> <a href="/a#part">A again</a> <a href="b?x=1&amp;y=2">B</a> <a href="/docs/guide.html">Guide</a>
         <a href="/data.csv">Data</a> <a href="/missing">Gone</a> <a href="#top">Top</a> <a href="mailto:someone@example.com">Mail</a>
         <a href="${other.url}/elsewhere">Elsewhere</a>
         <!-- <a href="/commented">not a link</a> -->`,
      ),
    },
  );
  site.page('/a', { body: html('Page A', '<h1>Page A</h1><p>Alpha text.</p><a href="/deep">Deeper</a>') });
  site.page('/b', { body: html('Page B', '<h1>Page B</h1><p>Beta text.</p>') });
  site.page('/docs/guide.html', { body: html('Guide', '<h1>The guide</h1><p>Read me.</p>') });
  site.page('/data.csv', { type: 'text/csv', body: 'city,people\nParis,2100000\nLyon,520000\n' });
  site.page('/deep', { body: html('Deep', '<p>deep</p>') });
  site.page('/old', { status: 301, type: 'text/plain', headers: { location: '/a' } });
  other.page('/elsewhere', { body: html('Elsewhere', '<h1>Another site</h1><p>Far away.</p>') });
});
test.after.always(async () => {
  await server?.stop();
  await site?.close();
  await other?.close();
});

async function ingestUrl(source: Record<string, unknown>, path: string, s = server, tok = token, pid = projectId) {
  const res = await s.api('POST', '/ingest/submit/saas', { token: tok, body: { project_id: pid, path, source: { type: 'url', ...source } } });
  if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return waitTask(s, tok, res.body.data.tasks[0].id);
}
const cat = async (path: string) => (await server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token })).body.data.content as string;
const fetchedSince = (from: number) => site.requests.slice(from);

test.serial('one page becomes one Markdown node with its title and source URL in front matter', async (t) => {
  const from = site.requests.length;
  const task = await ingestUrl({ url: `${site.url}/` }, 'web/one');
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.is(task.kind, 'url');
  t.is(task.source, `${site.url}/`);
  t.deepEqual(task.progress, { done: 1, total: 1, unit: 'pages' });
  t.deepEqual(task.result.nodes.map((n: any) => [n.path, n.type]), [['web/one/index.md', 'markdown']]);
  t.deepEqual(fetchedSince(from), ['/'], 'depth 0: the page alone');
  const md = await cat('web/one/index.md');
  t.regex(md, /^---\ntitle: "Home page"\n(.*\n)*source_url: "http:\/\/127\.0\.0\.1:\d+\/"\n---\n/);
  t.regex(md, /Welcome home/);
});

test.serial('a crawl goes breadth first over same-site links within depth, each address once; a non-HTML link goes through the file converters', async (t) => {
  const from = site.requests.length;
  const otherFrom = other.requests.length;
  const task = await ingestUrl({ url: `${site.url}/`, depth: 1 }, 'web/crawl');
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual(fetchedSince(from), ['/', '/a', '/b?x=1&y=2', '/docs/guide.html', '/data.csv', '/missing'], 'page order, fragments and duplicates dropped, no deeper than 1');
  t.deepEqual(other.requests.slice(otherFrom), [], 'same_site (the default) keeps to the first origin');
  const paths = task.result.nodes.map((n: any) => n.path);
  t.is(paths.length, 6);
  t.deepEqual(paths.slice(0, 2), ['web/crawl/index.md', 'web/crawl/a.md']);
  t.regex(paths[2], /^web\/crawl\/b_[0-9a-f]{8}\.md$/, 'a query string adds a hash to the name');
  t.deepEqual(paths.slice(3), ['web/crawl/docs/guide.md', 'web/crawl/data.json', 'web/crawl/data.md']);
  t.regex(await cat('web/crawl/docs/guide.md'), /The guide/);
  const rows = await server.api('GET', `/content/${projectId}/cat?path=web/crawl/data.json`, { token });
  t.deepEqual(rows.body.data.content, [
    { city: 'Paris', people: 2100000 },
    { city: 'Lyon', people: 520000 },
  ]);
  t.regex(await cat('web/crawl/data.md'), /\| city \| people \|\n\| --- \| --- \|\n\| Paris \| 2100000 \|/);
  t.deepEqual(task.progress, { done: 6, total: 6, unit: 'pages' });
  t.is(task.result.warnings.length, 1);
  t.regex(task.result.warnings[0], /\/missing answered 404/);
});

test.serial('max_pages stops the crawl; same_site false follows links to other sites, kept under their host', async (t) => {
  const from = site.requests.length;
  const capped = await ingestUrl({ url: `${site.url}/`, depth: 2, max_pages: 3 }, 'web/capped');
  t.deepEqual(fetchedSince(from), ['/', '/a', '/b?x=1&y=2']);
  t.is(capped.result.nodes.length, 3);
  t.deepEqual(capped.progress, { done: 3, total: 3, unit: 'pages' });

  const otherFrom = other.requests.length;
  const wide = await ingestUrl({ url: `${site.url}/`, depth: 1, same_site: false }, 'web/wide');
  t.deepEqual(other.requests.slice(otherFrom), ['/elsewhere']);
  const host = new URL(other.url).host;
  const elsewhere = wide.result.nodes.find((n: any) => n.path.endsWith('elsewhere.md'));
  t.is(elsewhere?.path, `web/wide/${host}/elsewhere.md`);
  t.regex(await cat(elsewhere.path), /Another site/);
});

test.serial('a redirect is followed and the page is named after where it landed', async (t) => {
  const task = await ingestUrl({ url: `${site.url}/old` }, 'web/moved');
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual(task.result.nodes.map((n: any) => n.path), ['web/moved/a.md']);
  t.regex(await cat('web/moved/a.md'), /source_url: "http:\/\/127\.0\.0\.1:\d+\/a"/);
});

test.serial('a PDF at the address is converted by the PDF converter; keep_original stores it beside', async (t) => {
  const pdf = work.path('report.pdf');
  writePdf(pdf, [['Quarterly report', 'Revenue grew.'], ['Second page text']]);
  site.page('/files/report', { type: 'application/pdf', body: readFileSync(pdf) });
  const res = await server.api('POST', '/ingest/submit/saas', {
    token,
    body: { project_id: projectId, path: 'web/pdf', keep_original: true, source: { type: 'url', url: `${site.url}/files/report` } },
  });
  const task = await waitTask(server, token, res.body.data.tasks[0].id);
  t.is(task.status, 'succeeded', JSON.stringify(task.error));
  t.deepEqual(
    task.result.nodes.map((n: any) => [n.path, n.type]),
    [
      ['web/pdf/files/report.md', 'markdown'],
      ['web/pdf/files/report.pdf', 'file'],
    ],
    'the extension comes from the media type',
  );
  const original = await fetch(`${server.url}/api/v1/content/${projectId}/raw?path=web/pdf/files/report.pdf`, { headers: { authorization: `Bearer ${token}` } });
  t.deepEqual(Buffer.from(await original.arrayBuffer()), readFileSync(pdf));
  const md = await cat('web/pdf/files/report.md');
  t.regex(md, /Quarterly report/);
  t.regex(md, /Second page text/);
});

test.serial('a first page that fails fails the task: an error status, a timeout, an answer over the size limit', async (t) => {
  const missing = await ingestUrl({ url: `${site.url}/missing` }, 'web/fail');
  t.is(missing.status, 'failed');
  t.is(missing.error.code, 'fetch_failed');
  t.regex(missing.error.message, /answered 404/);

  const strict = await startTestServer({}, { CNS_URL_FETCH_ALLOW_PRIVATE: 'true', CNS_INGEST_URL_TIMEOUT_S: '1', CNS_INGEST_MAX_FILE_BYTES: '2000' });
  t.teardown(() => strict.stop());
  const tok = (await strict.login()).token;
  const { projectId: pid } = await defaultProject(strict, tok);
  const silent = site.hold('/never', { body: 'too late' });
  t.teardown(() => silent.release());
  const slow = await ingestUrl({ url: `${site.url}/never` }, 'web', strict, tok, pid);
  t.is(slow.status, 'failed');
  t.regex(slow.error.message, /did not answer within 1 s/);
  site.page('/huge', { body: html('huge', `<p>${'x'.repeat(5000)}</p>`) });
  const huge = await ingestUrl({ url: `${site.url}/huge` }, 'web', strict, tok, pid);
  t.is(huge.status, 'failed');
  t.regex(huge.error.message, /larger than 2000 bytes/);
});

test.serial('without CNS_URL_FETCH_ALLOW_PRIVATE a loopback or private address is refused (422), and nothing is fetched', async (t) => {
  const guarded = await startTestServer();
  t.teardown(() => guarded.stop());
  const tok = (await guarded.login()).token;
  const { projectId: pid } = await defaultProject(guarded, tok);
  const from = site.requests.length;
  for (const url of [`${site.url}/`, 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:8080/', 'http://localhost:1/']) {
    const res = await guarded.api('POST', '/ingest/submit/saas', { token: tok, body: { project_id: pid, source: { type: 'url', url } } });
    t.is(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
    t.is(res.body.error.details[0].field, 'source.url');
    t.regex(res.body.message, /may not be fetched/);
  }
  t.deepEqual(site.requests.slice(from), []);
  t.is(await metadataCount(guarded, sql`SELECT COUNT(*) AS n FROM ingest_tasks`), 0);
});
