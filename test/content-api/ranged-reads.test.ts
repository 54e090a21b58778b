import test from 'ava';
import { call, connect, createEndpoint } from '../mcp/helpers.ts';
import { contentApi, createKey, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
// 'é' is 2 bytes, '✓' 3 and '😀' 4: byte ranges cut them at every offset.
const unicode = 'aé✓😀b\n';
const lines100 = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  projectId = (await defaultProject(server, token)).projectId;
  c = contentApi(server, token, projectId);
  const w = await c('POST', '/bulk-write', {
    files: [
      { path: 'docs/lines.md', node_type: 'markdown', content: lines100 },
      { path: 'docs/empty.md', node_type: 'markdown', content: '' },
      { path: 'docs/unicode.txt', node_type: 'file', content: b64(unicode) },
      { path: 'docs/no-newline.txt', node_type: 'file', content: b64('one\ntwo') },
      { path: 'docs/data.json', node_type: 'json', content: { a: 1, b: [true] } },
      { path: 'docs/blob.bin', node_type: 'file', content: b64(Buffer.from([0, 1, 2, 255, 0, 9])) },
      { path: 'docs/big.txt', node_type: 'file', content: b64(Array.from({ length: 5000 }, (_, i) => `row ${i + 1} ${'x'.repeat(i % 7)}`).join('\n')) },
      { path: 'docs/search/a.md', node_type: 'markdown', content: 'alpha\nthe quokka sleeps\nomega\n' },
      { path: 'docs/search/b.txt', node_type: 'file', content: b64('QUOKKA loud\nnothing\n') },
      { path: 'secret/s.md', node_type: 'markdown', content: 'the quokka launch codes\n' },
    ],
  });
  if (w.status !== 200) throw new Error(JSON.stringify(w.body));
});
test.after.always(() => server.stop());

const cat = async (q: string) => c('GET', `/cat?${q}`);

test('lines START-END: just those lines with the totals; START- to the end; past the end is empty', async (t) => {
  const r = await cat('path=docs/lines.md&lines=10-12');
  t.is(r.status, 200);
  t.like(r.body.data, { content: 'line 10\nline 11\nline 12\n', total_lines: 100, total_bytes: Buffer.byteLength(lines100), range: { unit: 'lines', start: 10, end: 12 }, eof: false, encoding: 'utf8', type: 'markdown' });
  const tail = await cat('path=docs/lines.md&lines=99-');
  t.like(tail.body.data, { content: 'line 99\nline 100\n', range: { start: 99, end: 100 }, eof: true });
  const clamped = await cat('path=docs/lines.md&lines=100-500');
  t.like(clamped.body.data, { content: 'line 100\n', range: { start: 100, end: 100 }, eof: true });
  const past = await cat('path=docs/lines.md&lines=101-200');
  t.like(past.body.data, { content: '', range: { start: 101, end: 100 }, total_lines: 100, eof: true });
  const noNl = await cat('path=docs/no-newline.txt&lines=2-2');
  t.like(noNl.body.data, { content: 'two', total_lines: 2, eof: true });
  // A large text: the line index's checkpoints (every 256 lines) are crossed.
  const big = await cat('path=docs/big.txt&lines=4000-4001');
  t.is(big.body.data.content, `row 4000 ${'x'.repeat(3999 % 7)}\nrow 4001 ${'x'.repeat(4000 % 7)}\n`);
  t.is(big.body.data.total_lines, 5000);
});

test('an empty file has 0 lines and 0 bytes', async (t) => {
  t.like((await cat('path=docs/empty.md&lines=1-10')).body.data, { content: '', total_lines: 0, total_bytes: 0, eof: true, range: { start: 1, end: 0 } });
  t.like((await cat('path=docs/empty.md&bytes=0-10')).body.data, { content: '', total_bytes: 0, eof: true });
});

test('bytes of text give whole characters: a character begun before START is skipped, one begun inside is given whole', async (t) => {
  // a(0) é(1-2) ✓(3-5) 😀(6-9) b(10) \n(11)
  t.like((await cat('path=docs/unicode.txt&bytes=0-1')).body.data, { content: 'aé', bytes: { start: 0, end: 2 } });
  t.like((await cat('path=docs/unicode.txt&bytes=2-4')).body.data, { content: '✓', bytes: { start: 3, end: 5 } });
  t.like((await cat('path=docs/unicode.txt&bytes=7-7')).body.data, { content: '', range: { start: 7, end: 6 } });
  t.like((await cat('path=docs/unicode.txt&bytes=6-6')).body.data, { content: '😀', bytes: { start: 6, end: 9 } });
  // Pages asked back to back give every character exactly once.
  let text = '';
  for (let s = 0; s < 12; s += 2) text += (await cat(`path=docs/unicode.txt&bytes=${s}-${s + 1}`)).body.data.content;
  t.is(text, unicode);
  t.like((await cat('path=docs/unicode.txt&bytes=50-60')).body.data, { content: '', total_bytes: 12, eof: true });
});

test('json is sliced as its stored text; binary files by bytes only (base64), lines are a 422', async (t) => {
  const j = await cat('path=docs/data.json&lines=2-2');
  t.like(j.body.data, { content: '  "a": 1,\n', type: 'json' });
  const bin = await cat('path=docs/blob.bin&bytes=2-4');
  t.like(bin.body.data, { encoding: 'base64', content: Buffer.from([2, 255, 0]).toString('base64'), total_lines: null });
  t.is((await cat('path=docs/blob.bin&lines=1-2')).status, 422);
});

test('bad ranges are a 422 naming the field; both at once too', async (t) => {
  for (const q of ['lines=0-3', 'lines=5-2', 'lines=abc', 'bytes=-5', 'lines=1-2&bytes=0-1']) {
    const r = await cat(`path=docs/lines.md&${q}`);
    t.is(r.status, 422, q);
  }
  t.is((await cat('path=docs&lines=1-2')).status, 422, 'a folder');
  t.is((await cat('path=docs/nope.md&lines=1-2')).status, 404);
});

test('a key limited to a folder reads ranges only inside it', async (t) => {
  const { key } = await createKey(server, token, projectId, { scope_path: 'docs' });
  t.is((await server.api('GET', `/content/${projectId}/cat?path=docs/lines.md&lines=1-1`, { token: key })).status, 200);
  t.is((await server.api('GET', `/content/${projectId}/cat?path=secret/s.md&lines=1-1`, { token: key })).status, 403);
});

test('MCP: cat takes lines and bytes; grep finds lines with context inside the endpoint only (SDK client)', async (t) => {
  const docs = await createEndpoint(server, token, projectId, 'docs', { name: 'Docs', mode: 'read' });
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  const names = (await s.client.listTools()).tools.map((x) => x.name);
  t.true(names.includes('grep'));
  const catTool = (await s.client.listTools()).tools.find((x) => x.name === 'cat')!;
  t.truthy((catTool.inputSchema.properties as Record<string, unknown>).lines);
  const page = await call(s.client, 'cat', { path: 'docs/lines.md', lines: '50-51' });
  t.false(page.isError, page.text);
  t.like(page.data, { content: 'line 50\nline 51\n', total_lines: 100, eof: false });
  const bad = await call(s.client, 'cat', { path: 'docs/lines.md', lines: '9-1' });
  t.true(bad.isError);

  const g = await call(s.client, 'grep', { pattern: 'quokka', ignore_case: true, context_lines: 1 });
  t.false(g.isError, g.text);
  t.deepEqual(
    g.data.matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`),
    ['docs/search/a.md:2', 'docs/search/b.txt:1'],
    'the secret folder is outside the endpoint',
  );
  t.deepEqual(g.data.matches[0].before, ['alpha']);
  t.deepEqual(g.data.matches[0].after, ['omega']);
  const capped = await call(s.client, 'grep', { pattern: '^line \\d+$', path_prefix: 'docs/lines.md', max_results: 3 });
  t.is(capped.data.matches.length, 3);
  t.true(capped.data.truncated);
  const fixed = await call(s.client, 'grep', { pattern: 'row 4999 ', fixed_strings: true });
  t.deepEqual(fixed.data.matches.map((m: { line: number }) => m.line), [4999]);
  // RE2 refuses backreferences (no backtracking engine): a 422-style tool error, never a stalled server.
  const backref = await call(s.client, 'grep', { pattern: '(a)\\1' });
  t.true(backref.isError);
  t.regex(backref.text, /pattern/);
  // A pattern that backtracking engines take exponential time on runs in linear time here.
  const started = Date.now();
  const evil = await call(s.client, 'grep', { pattern: '(x+x+)+y', path_prefix: 'docs/big.txt' });
  t.false(evil.isError);
  t.true(Date.now() - started < 5000);
});

test('grep through the tools library over REST, held to the caller\'s scope', async (t) => {
  const tool = await server.api('POST', '/tools', { token, body: { project_id: projectId, name: 'grep all', type: 'grep' } });
  t.is(tool.status, 201, JSON.stringify(tool.body));
  const { key } = await createKey(server, token, projectId, { scope_path: 'docs' });
  const r = await server.api('POST', `/tools/${tool.body.data.id}/call`, { token: key, body: { arguments: { pattern: 'quokka' } } });
  t.is(r.status, 200, JSON.stringify(r.body));
  const paths = r.body.data.result?.matches?.map((m: { path: string }) => m.path) ?? r.body.data.matches.map((m: { path: string }) => m.path);
  t.deepEqual(paths, ['docs/search/a.md']);
  const owner = await server.api('POST', `/tools/${tool.body.data.id}/call`, { token, body: { arguments: { pattern: 'quokka' } } });
  const ownerPaths = (owner.body.data.result ?? owner.body.data).matches.map((m: { path: string }) => m.path);
  t.deepEqual(ownerPaths, ['docs/search/a.md', 'secret/s.md']);
});
