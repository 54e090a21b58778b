import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
let u: CliUser;
const dir = mkdtempSync(join(tmpdir(), 'cns-cli-upload-'));
const FILES = 1100;

test.before(async () => {
  server = await startTestServer();
  u = new CliUser();
  await u.login(server);
  mkdirSync(join(dir, 'pages'));
  mkdirSync(join(dir, '.git'));
  for (let i = 0; i < FILES; i++) writeFileSync(join(dir, 'pages', `p${String(i).padStart(4, '0')}.md`), `# page ${i}\n`);
  writeFileSync(join(dir, 'settings.json'), '{"theme":"dark"}');
  writeFileSync(join(dir, 'logo.bin'), Buffer.alloc(2048, 7));
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
});
test.after.always(async () => {
  u?.dispose();
  rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

test('write --recursive uploads a folder through bulk-write in chunks, with progress lines off a terminal', async (t) => {
  const total = FILES + 2;
  const r = await u.run(['write', 'site', dir, '--recursive', '-m', 'import site']);
  t.is(r.code, 0, r.stderr);
  const progress = r.stderr.trimEnd().split('\n');
  t.is(progress.length, 3, 'one line per chunk of at most 500 files');
  t.regex(progress[0]!, /^uploading 500\/1102 files, [\d.]+ KB\/[\d.]+ KB, [\d.]+ (B|KB|MB)\/s$/);
  t.regex(progress[2]!, new RegExp(`^uploading ${total}/${total} files, `));
  t.regex(r.stdout, new RegExp(`^Uploaded ${total} files \\([\\d.]+ KB\\) to site in 3 commits; \\d+ nodes changed\\n$`));

  const again = await u.run(['write', 'site', dir, '-r', '--json']);
  t.like(again.json, { path: 'site', files: total, commits: 0, changed_count: 0 }, 'an unchanged folder makes no commits');

  const [tree, settings, logo, log] = await Promise.all([
    u.run(['tree', 'site', '--depth', '1']),
    u.run(['cat', 'site/settings.json', '--json']),
    u.run(['stat', 'site/logo.bin', '--json']),
    u.run(['log', 'site/pages/p0000.md', '--json']),
  ]);
  t.is(tree.stdout, `site/\n├── pages/ (${FILES} items)\n├── logo.bin\n└── settings.json\n`, '.git is not uploaded');
  t.deepEqual(settings.json.content, { theme: 'dark' });
  t.like(logo.json, { type: 'file', size: 2048 });
  t.is(log.json.versions[0].message, 'import site');
});

test('write --recursive refuses a file, a missing folder and --base-version', async (t) => {
  const [file, missing, base] = await Promise.all([
    u.run(['write', 'x', join(dir, 'settings.json'), '-r']),
    u.run(['write', 'x', join(dir, 'nope'), '-r']),
    u.run(['write', 'x', dir, '-r', '--base-version', '1']),
  ]);
  t.is(file.code, 2);
  t.regex(file.stderr, /is not a folder/);
  t.is(missing.code, 2);
  t.is(base.code, 2);
});
