import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkMarkdown } from '../../src/search/chunker.ts';
import { QueryPool } from '../../src/search/queryPool.ts';
import { SearchIndex } from '../../src/search/searchIndex.ts';

const dir = mkdtempSync(join(tmpdir(), 'cns-query-pool-'));
const pool = new QueryPool(2);
test.after.always(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

const put = (index: SearchIndex, id: string, text: string) =>
  index.transaction(() => index.putDoc({ nodeId: id, path: `docs/${id}.md`, type: 'markdown', version: 1, contentHash: id }, chunkMarkdown(text)));

test('query threads read what the indexer committed, concurrently, and let go of a deleted index file', async (t) => {
  const file = join(dir, 'p.sqlite');
  let index = new SearchIndex(file);
  put(index, 'a', '# Alpha\n\nThe zebra crossing is painted white.');
  const first = await pool.run(file, 'lexical', '"zebra"', null, '', 10, ['zebra']);
  t.deepEqual(first.map((h) => h.nodeId), ['a']);
  t.regex(first[0]!.snippet, /\*\*zebra\*\*/);
  t.is(first[0]!.headingPath, 'Alpha');

  // A commit after the thread opened its connection is seen by the next query.
  put(index, 'b', '# Beta\n\nA zebra and a zebra foal.');
  const both = await Promise.all(Array.from({ length: 8 }, () => pool.run(file, 'lexical', '"zebra"', null, '', 10, ['zebra'])));
  for (const hits of both) t.deepEqual(hits.map((h) => h.nodeId).sort(), ['a', 'b']);
  t.deepEqual(await pool.run(file, 'texts', [first[0]!.chunkId, 999_999]), ['# Alpha\n\nThe zebra crossing is painted white.', null]);
  t.deepEqual(await pool.run(file, 'lexical', '"zebra" "giraffe"', '"zebra" OR "giraffe"', 'docs/b.md', 10, ['zebra', 'giraffe']).then((h) => h.map((x) => x.nodeId)), ['b'], 'any word, beneath a prefix, when none has all');

  // The index is deleted and made again at the same path: the threads must not keep reading the old file.
  index.close();
  await pool.forget(file);
  SearchIndex.destroy(file);
  index = new SearchIndex(file);
  put(index, 'c', '# Gamma\n\nNo striped animals here, only a giraffe.');
  const after = await Promise.all([pool.run(file, 'lexical', '"zebra"', null, '', 10, ['zebra']), pool.run(file, 'lexical', '"giraffe"', null, '', 10, ['giraffe'])]);
  t.deepEqual(after.map((hits) => hits.map((h) => h.nodeId)), [[], ['c']]);
  index.close();
});

test('a query on a missing index file is refused with the reason, and the pool keeps answering', async (t) => {
  await t.throwsAsync(pool.run(join(dir, 'missing.sqlite'), 'lexical', '"x"', null, '', 5, ['x']), { message: /unable to open|no such file|SQLITE_CANTOPEN|directory/i });
  const file = join(dir, 'q.sqlite');
  const index = new SearchIndex(file);
  put(index, 'd', 'plain words');
  t.is((await pool.run(file, 'lexical', '"plain"', null, '', 5, ['plain'])).length, 1);
  index.close();
});
