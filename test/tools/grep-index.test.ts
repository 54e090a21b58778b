import test from 'ava';
import { contentApi, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { indexReady } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
let grepTool: string;

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  const files: { path: string; node_type: string; content: unknown }[] = [
    { path: 'notes/a.md', node_type: 'markdown', content: '# Title\n\nThe quokka smiles.\nKelvin \u212Aelvin and \u017Fecret.\n# Lone final heading' },
    { path: 'notes/crlf.txt', node_type: 'file', content: b64('first line\r\nsecond quokka line\r\nthird\r\n') },
    { path: 'data/config.json', node_type: 'json', content: { server: { codename: 'quetzal', port: 8080 }, list: [1, 2, 3], quote: 'say "hi"' } },
    { path: 'web/page.html', node_type: 'file', content: b64('<html><body><div class="hero">Quokka HTML</div><script>var x = "needle";</script></body></html>') },
    { path: 'bin/blob.bin', node_type: 'file', content: b64(Buffer.concat([Buffer.from('quokka needle '), Buffer.from([0, 1, 2, 0])])) },
    { path: 'unicode/greek.md', node_type: 'markdown', content: 'Καλημέρα κόσμε\nemoji 🦘 kangaroo\nStraße STRASSE straße\n' },
    { path: 'empty.txt', node_type: 'file', content: '' },
    { path: 'deep/x/y/z.md', node_type: 'markdown', content: 'deep needle here\n' },
  ];
  for (let i = 0; i < 120; i++) {
    const lines = Array.from({ length: 20 }, (_, j) => `row ${i * 20 + j} value ${(i * 20 + j) * 7}${(i + j) % 17 === 0 ? ' needle' : ''}`);
    files.push({ path: `big/gen-${String(i).padStart(3, '0')}.md`, node_type: 'markdown', content: lines.join('\n') + '\n' });
  }
  const w = await c('POST', '/bulk-write', { files });
  if (w.status !== 200) throw new Error(JSON.stringify(w.body));
  const tool = await server.api('POST', '/tools', { token, body: { project_id: projectId, name: 'grep', type: 'grep' } });
  if (tool.status !== 201) throw new Error(JSON.stringify(tool.body));
  grepTool = tool.body.data.id;
});
test.after.always(async () => server?.stop());

type GrepAnswer = { matches: unknown[]; truncated: boolean; skipped: unknown[]; used_index: boolean; files_scanned: number };
async function grep(args: Record<string, unknown>): Promise<GrepAnswer> {
  const r = await server.api('POST', `/tools/${grepTool}/call`, { token, body: { arguments: args } });
  if (r.status !== 200) throw new Error(`grep ${JSON.stringify(args)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.result ?? r.body.data;
}

/** Pattern, options, and whether it has a literal the index can narrow with. */
const cases: [Record<string, unknown>, boolean][] = [
  [{ pattern: 'quokka' }, true],
  [{ pattern: 'quokka', ignore_case: true }, true],
  [{ pattern: 'Quokka', fixed_strings: true }, true],
  [{ pattern: '"codename": "quetzal"', fixed_strings: true }, true],
  [{ pattern: 'say \\"hi\\"', fixed_strings: true }, true],
  [{ pattern: 'class="hero"', fixed_strings: true }, true],
  [{ pattern: 'Lone final heading' }, true],
  [{ pattern: 'kelvin', ignore_case: true }, true],
  [{ pattern: 'secret', ignore_case: true }, true],
  [{ pattern: 'STRASSE', ignore_case: true }, true],
  [{ pattern: 'Straße', fixed_strings: true }, true],
  [{ pattern: 'row \\d+ value 7\\d' }, true],
  [{ pattern: 'needle', max_results: 5 }, true],
  [{ pattern: 'needle', context_lines: 2, path_prefix: 'big' }, true],
  [{ pattern: 'kangaroo|quokka' }, false],
  [{ pattern: '🦘 kan' }, true],
  [{ pattern: 'second quokka line$' }, true],
  [{ pattern: 'Καλημέρα' }, true],
  [{ pattern: 'nothing-matches-this' }, true],
  [{ pattern: 'ab' }, false],
  [{ pattern: '.' , max_results: 1000 }, false],
];

test.serial('grep answers the same with and without the trigram index; the answer says which way it went', async (t) => {
  const without: GrepAnswer[] = [];
  for (const [args] of cases) without.push(await grep(args));
  for (const a of without) t.false(a.used_index, 'no search tool yet: no index');
  t.true(without.some((a) => a.matches.length > 0));
  t.true(without.some((a) => a.truncated));
  // The cases that would go wrong with a lossy or differently folded index do match something.
  const paths = (i: number) => without[i]!.matches.map((m) => (m as { path: string }).path);
  t.deepEqual(paths(6), ['notes/a.md'], 'a lone final heading (the chunker drops it)');
  t.deepEqual(paths(5), ['web/page.html'], 'HTML markup (the search text drops it)');
  t.deepEqual(paths(7), ['notes/a.md'], 'the Kelvin sign folds to k for RE2');
  t.deepEqual(paths(8), ['notes/a.md'], 'long s folds to s for RE2');
  t.deepEqual(paths(16), ['notes/crlf.txt'], 'a CRLF line');
  t.false(paths(0).includes('bin/blob.bin'), 'binary files are not read');

  const created = await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'search' } });
  t.is(created.status, 202, JSON.stringify(created.body));
  await indexReady(server, token, created.body.data.tool.id);

  for (let i = 0; i < cases.length; i++) {
    const [args, narrows] = cases[i]!;
    const w = await grep(args);
    t.is(w.used_index, narrows, JSON.stringify(args));
    t.deepEqual({ matches: w.matches, truncated: w.truncated, skipped: w.skipped }, { matches: without[i]!.matches, truncated: without[i]!.truncated, skipped: without[i]!.skipped }, JSON.stringify(args));
    if (narrows) t.true(w.files_scanned <= without[i]!.files_scanned);
  }
  const selective = await grep({ pattern: 'quetzal' });
  t.true(selective.used_index);
  t.is(selective.files_scanned, 1, 'only the one candidate is read');
  t.deepEqual(
    selective.matches.map((m) => (m as { path: string }).path),
    ['data/config.json'],
  );
});

test.serial('a node written after the index was built is scanned, whether or not the index has caught up', async (t) => {
  await c('POST', '/write', { path: 'notes/fresh.md', node_type: 'markdown', content: 'a fresh wombat appears\n' });
  await c('POST', '/write', { path: 'notes/a.md', node_type: 'markdown', content: '# Title\n\nno more marsupials\n' });
  const fresh = await grep({ pattern: 'fresh wombat' });
  t.deepEqual(fresh.matches, [{ path: 'notes/fresh.md', line: 1, text: 'a fresh wombat appears' }]);
  const gone = await grep({ pattern: 'The quokka smiles' });
  t.deepEqual(gone.matches, [], 'the old content is not answered');
  const now = await grep({ pattern: 'marsupials' });
  t.deepEqual(now.matches, [{ path: 'notes/a.md', line: 3, text: 'no more marsupials' }]);
});
