import test from 'ava';
import { Command } from 'commander';
import { openDatabase } from '../../src/db/database.ts';
import { mimeTypeFor, normalizePath, typeFromName } from '../../src/content/paths.ts';
import { registerReindexCommand, runReindex } from '../../src/cli/commands/reindex.ts';
import { memoryIo } from '../helpers/cliIo.ts';
import { alice, fixture } from './helpers.ts';

test('paths are normalized and unsafe ones rejected', (t) => {
  t.is(normalizePath('a/b/'), 'a/b');
  t.is(normalizePath(''), '');
  t.is(normalizePath('name with spaces/ünïcode.md'), 'name with spaces/ünïcode.md');
  for (const bad of ['../a', 'a/..', '/a', 'a//b', '.git', 'x/.Git/y', 'a\nb', 'a\u0000b', 'é'.repeat(128)]) {
    t.throws(() => normalizePath(bad), { instanceOf: Error }, bad);
  }
  t.is(normalizePath('é'.repeat(127)).length, 127);
});

test('types and mime types from names', (t) => {
  t.is(typeFromName('a.JSON'), 'json');
  t.is(typeFromName('a.markdown'), 'markdown');
  t.is(typeFromName('a.md'), 'markdown');
  t.is(typeFromName('.md'), 'file');
  t.is(typeFromName('a.txt'), 'file');
  t.is(mimeTypeFor('file', 'x.pdf'), 'application/pdf');
  t.is(mimeTypeFor('file', 'x.unknown'), 'application/octet-stream');
  t.is(mimeTypeFor('folder', 'x'), null);
});

test('cns reindex rebuilds every project and prints differences', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write('one', alice, { path: 'a.md', type: 'markdown', content: 'a' });
  await f.store.write('two', alice, { path: 'b.md', type: 'markdown', content: 'b' });
  f.db.prepare(`DELETE FROM nodes WHERE project_id = 'two'`).run();
  const lines: string[] = [];
  const reports = await runReindex({ dataDir: f.dir }, (l) => lines.push(l));
  t.deepEqual(reports.map((r) => [r.projectId, r.differences.length]), [['one', 0], ['two', 1]]);
  t.regex(lines[0], /^one: 1 commits, 1 nodes, 1 versions: index matched git$/);
  t.regex(lines[1], /^two: .* 1 differences/);
  const db = openDatabase(`${f.dir}/cns.db`);
  t.is((db.prepare(`SELECT COUNT(*) AS n FROM nodes WHERE project_id = 'two'`).get() as { n: number }).n, 1);
  db.close();
  const program = new Command();
  registerReindexCommand(program, memoryIo().io);
  t.truthy(program.commands.find((c) => c.name() === 'reindex'));
});
