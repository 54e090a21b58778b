import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
let u: CliUser;
let projectId: string;
let token: string;
const local = mkdtempSync(join(tmpdir(), 'cns-cli-files-'));

test.before(async () => {
  server = await startTestServer();
  u = new CliUser();
  await u.login(server);
  const who = await u.run(['projects', '--json']);
  projectId = who.json.default_project_id;
  token = (await server.login()).token;
});
test.after.always(async () => {
  u?.dispose();
  rmSync(local, { recursive: true, force: true });
  await server?.stop();
});

test('write (stdin, file, --type), then cat, ls, stat and tree, human and --json', async (t) => {
  const bin = randomBytes(3000);
  writeFileSync(join(local, 'conf.json'), '{"b":[1,2],"a":"ä"}');
  writeFileSync(join(local, 'logo.png'), bin);
  const writes = await Promise.all([
    u.run(['write', 'read/notes/a.md', '-m', 'first note'], { input: '# A\n\nhello\n' }),
    u.run(['write', 'read/conf.json', join(local, 'conf.json'), '--json']),
    u.run(['write', 'read/logo.png', join(local, 'logo.png')]),
    u.run(['write', 'read/plain.txt', '--type', 'markdown'], { input: 'plain text' }),
  ]);
  for (const w of writes) t.is(w.code, 0, w.stderr);
  t.is(writes[0]!.stdout, 'Wrote read/notes/a.md (markdown, 11 B): version 1\n');
  t.like(writes[1]!.json, { path: 'read/conf.json', type: 'json', version: 1, changed: true });
  t.is(writes[2]!.stdout, 'Wrote read/logo.png (file, 2.9 KB): version 1\n');

  const [md, json, png, txt, ls, lsJson, stat, statJson, tree, treeDepth, treeJson, unchanged] = await Promise.all([
    u.run(['cat', 'read/notes/a.md']),
    u.run(['cat', '/read/conf.json']),
    u.run(['cat', 'read/logo.png']),
    u.run(['cat', 'read/plain.txt', '--json']),
    u.run(['ls', 'read']),
    u.run(['ls', 'read', '--json']),
    u.run(['stat', 'read/logo.png']),
    u.run(['stat', 'read/notes', '--json']),
    u.run(['tree', 'read']),
    u.run(['tree', 'read', '--depth', '1']),
    u.run(['tree', 'read/notes', '--json']),
    u.run(['write', 'read/plain.txt', '--type', 'markdown'], { input: 'plain text' }),
  ]);
  t.is(md.stdout, '# A\n\nhello\n');
  t.is(json.stdout, '{\n  "b": [\n    1,\n    2\n  ],\n  "a": "ä"\n}\n');
  t.true(png.stdoutBytes.equals(bin), 'files come back byte for byte');
  t.like(txt.json, { path: 'read/plain.txt', type: 'markdown', content_text: 'plain text' });
  const lines = ls.stdout.trimEnd().split('\n');
  t.regex(lines[0]!, /^TYPE\s+SIZE\s+VERSION\s+UPDATED\s+NAME$/);
  t.regex(lines[1]!, /^folder\s+1 item\s+v1\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+notes\/$/);
  t.regex(lines[2]!, /^json\s+\d+ B\s+v1\s+.*conf\.json$/);
  t.deepEqual(lsJson.json.entries.map((e: { name: string }) => e.name), ['notes', 'conf.json', 'logo.png', 'plain.txt']);
  t.regex(stat.stdout, /^path: +read\/logo\.png\nid: +\S+\ntype: +file\nsize: +2\.9 KB \(3000 bytes\)\nmime type: +image\/png\nversion: +1\n/);
  t.like(statJson.json, { path: 'read/notes', type: 'folder', children_count: 1 });
  t.is(tree.stdout, 'read/\n├── notes/\n│   └── a.md\n├── conf.json\n├── logo.png\n└── plain.txt\n');
  t.is(treeDepth.stdout, 'read/\n├── notes/ (1 item)\n├── conf.json\n├── logo.png\n└── plain.txt\n');
  t.deepEqual(treeJson.json.children.map((c: { path: string }) => c.path), ['read/notes/a.md']);
  t.is(unchanged.stdout, 'read/plain.txt unchanged: still version 1\n');
});

test('mkdir, mv, rm to the trash, trash, restore and rm --permanent', async (t) => {
  await u.run(['write', 'ops/doc.md'], { input: 'doc' });
  const mkdir = await u.run(['mkdir', 'ops/archive/2026']);
  t.is(mkdir.stdout, 'Folder created: ops/archive/2026/\n');
  const mv = await u.run(['mv', 'ops/doc.md', 'ops/archive/2026/doc.md', '-m', 'file it']);
  t.is(mv.stdout, 'Moved ops/doc.md → ops/archive/2026/doc.md\n');
  const rm = await u.run(['rm', 'ops/archive/2026/doc.md', '--json']);
  t.like(rm.json, { path: 'ops/archive/2026/doc.md', permanent: false });
  const trashPath: string = rm.json.trash_path;
  const [trash, trashJson] = await Promise.all([u.run(['trash']), u.run(['trash', '--json'])]);
  t.regex(trash.stdout, /^DELETED\s+TYPE\s+TRASH PATH\s+ORIGINAL PATH\n/);
  t.true(trash.stdout.includes(`markdown  ${trashPath}  ops/archive/2026/doc.md`), trash.stdout);
  t.true(trashJson.json.items.some((i: { trash_path: string }) => i.trash_path === trashPath));
  const restore = await u.run(['restore', trashPath, 'ops/doc.md']);
  t.is(restore.stdout, `Restored ops/doc.md (from ${trashPath})\n`);
  t.is((await u.run(['cat', 'ops/doc.md'])).stdout, 'doc');
  const gone = await u.run(['rm', 'ops', '--permanent']);
  t.is(gone.stdout, 'Deleted ops permanently\n');
  t.is((await u.run(['stat', 'ops/doc.md'])).code, 4);
});

test('log, diff and rollback, human and --json', async (t) => {
  await u.run(['write', 'hist/page.md', '-m', 'draft'], { input: 'one\ntwo\n' });
  await u.run(['write', 'hist/page.md', '-m', 'edit'], { input: 'one\nthree\n' });
  const [log, logJson, diff, diffJson] = await Promise.all([
    u.run(['log', 'hist/page.md']),
    u.run(['log', 'hist/page.md', '--json', '--limit', '1']),
    u.run(['diff', 'hist/page.md', '1', '2']),
    u.run(['diff', 'hist/page.md', '1', '2', '--json']),
  ]);
  t.regex(log.stdout, /^VERSION\s+DATE\s+AUTHOR\s+OPERATION\s+SIZE\s+MESSAGE\nv2\*\s+\S+ \S+\s+admin@example\.com\s+update\s+10 B\s+edit\nv1\s+.*create\s+8 B\s+draft\n$/);
  t.like(logJson.json, { path: 'hist/page.md', total: 2, current_version: 2 });
  t.is(logJson.json.versions.length, 1);
  t.regex(diff.stdout, /--- hist\/page\.md@v1\n\+\+\+ hist\/page\.md@v2\n[\s\S]* one\n-two\n\+three\n/);
  t.like(diffJson.json, { kind: 'text', added_lines: 1, removed_lines: 1 });
  const rb = await u.run(['rollback', 'hist/page.md', '1']);
  t.is(rb.stdout, 'Rolled hist/page.md back to the content of version 1: now version 3\n');
  const afterRollback = await u.run(['log', 'hist/page.md', '--limit', '1']);
  t.regex(afterRollback.stdout, /\nv3\*\s.*rollback\s+\d+ B\s+rollback hist\/page\.md to version 1\n/, 'the rollback names the path, not the node id');
  const [now, old] = await Promise.all([u.run(['cat', 'hist/page.md']), u.run(['cat', 'hist/page.md', '--version', '2'])]);
  t.is(now.stdout, 'one\ntwo\n');
  t.is(old.stdout, 'one\nthree\n');
});

test('failures: not found 4, conflict 5, bad input 2, forbidden 3, with the API message', async (t) => {
  await u.run(['write', 'err/a.md'], { input: 'a' });
  await u.run(['write', 'err/b.md'], { input: 'b' });
  const { key } = await createKey(server, token, projectId, { mode: 'read' });
  const [missing, missingJson, stale, exists, badJson, folder, readOnly, badVersion, noDiff] = await Promise.all([
    u.run(['cat', 'err/nope.md']),
    u.run(['cat', 'err/nope.md', '--json']),
    u.run(['write', 'err/a.md', '--base-version', '7'], { input: 'x' }),
    u.run(['mv', 'err/a.md', 'err/b.md']),
    u.run(['write', 'err/c.json'], { input: '{not json' }),
    u.run(['cat', 'err']),
    u.run(['write', 'err/k.md'], { input: 'k', env: { CNS_TOKEN: key } }),
    u.run(['log', 'err/a.md', '--limit', '0']),
    u.run(['diff', 'err/a.md', '1', '9']),
  ]);
  t.is(missing.code, 4);
  t.is(missing.stderr, 'cns: no node at err/nope.md\n');
  t.is(missing.stdout, '');
  t.like(JSON.parse(missingJson.stderr), { success: false, error: { code: 'NOT_FOUND', exit_code: 4 } });
  t.is(stale.code, 5);
  t.regex(stale.stderr, /err\/a\.md is at version 1, not 7/);
  t.is(exists.code, 5, exists.stderr);
  t.is(badJson.code, 2);
  t.regex(badJson.stderr, /stdin is not valid JSON/);
  t.is(folder.code, 2);
  t.regex(folder.stderr, /err is a folder: list it with `cns ls err`/);
  t.is(readOnly.code, 3);
  t.regex(readOnly.stderr, /read-only/);
  t.is(badVersion.code, 2);
  t.is(noDiff.code, 4, noDiff.stderr);
});
