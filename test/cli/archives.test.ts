import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeZip } from '../helpers/archives.ts';
import { createKey } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
let u: CliUser;
let token: string;
let projectId: string;
let copyId: string;
let firstVersion: number;
const local = mkdtempSync(join(tmpdir(), 'cns-cli-archives-'));
const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);

test.before(async () => {
  server = await startTestServer();
  u = new CliUser();
  await u.login(server);
  token = (await server.login()).token;
  projectId = (await u.run(['projects', '--json'])).json.default_project_id;
  const w = await server.api('POST', `/content/${projectId}/bulk-write`, {
    token,
    body: {
      files: [
        { path: 'docs/guide.md', content: '# Guide\n\nhéllo ✓\n', node_type: 'markdown' },
        { path: 'docs/deep/conf.json', content: { a: 1, list: [1, 2, { b: 'c' }], s: 'ünï' }, node_type: 'json' },
        { path: 'docs/data/blob.bin', content: binary.toString('base64'), node_type: 'file' },
        { path: 'other.md', content: 'not in docs', node_type: 'markdown' },
      ],
    },
  });
  if (w.status !== 200) throw new Error(JSON.stringify(w.body));
  firstVersion = w.body.data.project_version;
  await server.api('POST', `/content/${projectId}/mkdir`, { token, body: { path: 'docs/empty' } });
  await server.api('POST', `/content/${projectId}/write`, { token, body: { path: 'docs/guide.md', content: '# Guide v2\n', node_type: 'markdown' } });
  const created = await u.run(['projects', 'create', 'Copy', '--json']);
  if (created.code !== 0) throw new Error(created.stderr);
  copyId = created.json.id;
});
test.after.always(async () => {
  u?.dispose();
  rmSync(local, { recursive: true, force: true });
  await server?.stop();
});

type Flat = { path: string; type: string; content_hash: string | null };
/** Every node beneath `path` (relative to it) with its type and content hash, through `cns tree --json`. */
async function flatTree(project: string, path: string): Promise<Flat[]> {
  const r = await u.run(['tree', path, '--project', project, '--json']);
  if (r.code !== 0) throw new Error(r.stderr);
  const out: Flat[] = [];
  const walk = (n: { path: string; type: string; content_hash: string | null; children?: unknown[] | null }) => {
    for (const c of (n.children ?? []) as (typeof n)[]) {
      out.push({ path: c.path.slice(path.length + 1), type: c.type, content_hash: c.content_hash });
      walk(c);
    }
  };
  walk(r.json);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

const versionsOf = async (project: string) => (await server.api('GET', `/projects/${project}/dashboard`, { token })).body.data.commits as number;

test.serial('export to a file, import into another project: identical content in one version', async (t) => {
  const zip = join(local, 'docs.zip');
  const exported = await u.run(['export', 'docs', '-o', zip]);
  t.is(exported.code, 0, exported.stderr);
  t.regex(exported.stdout, /^Exported docs at version \d+ to .*docs\.zip \(zip, [\d.]+ (B|KB)\)\n$/);
  t.is(readFileSync(zip).readUInt32LE(0), 0x04034b50, 'a zip');
  t.false(existsSync(`${zip}.part`));

  const before = await versionsOf(copyId);
  const imported = await u.run(['import', zip, 'copy', '--project', 'Copy', '-m', 'docs from the zip', '--json']);
  t.is(imported.code, 0, imported.stderr);
  t.like(imported.json, { changed: true, files: 3, removed: 0 });
  t.is(await versionsOf(copyId), before + 1, 'one version');
  t.deepEqual(await flatTree('Copy', 'copy'), await flatTree(projectId, 'docs'), 'same nodes, same blobs, the empty folder too');
  const log = await u.run(['log', 'copy/guide.md', '--project', 'Copy', '--json']);
  t.is(log.json.versions[0].message, 'docs from the zip');

  const again = await u.run(['import', zip, 'copy', '--project', 'Copy']);
  t.is(again.code, 0, again.stderr);
  t.is(again.stdout, "copy already holds the archive's content: nothing changed\n");
});

test.serial('export to stdout as tar.gz through a pipe, at an earlier version; import from stdin', async (t) => {
  const old = await u.spawn(['export', 'docs', '--format', 'tar.gz', '--version', String(firstVersion)]);
  t.is(old.code, 0, old.stderr);
  t.is(old.stdoutBytes[0], 0x1f, 'gzip');
  t.is(old.stdoutBytes[1], 0x8b);
  const imported = await u.spawn(['import', '-', 'old', '--project', 'Copy'], { input: old.stdoutBytes });
  t.is(imported.code, 0, imported.stderr);
  t.regex(imported.stdout, /^Imported 3 files and \d+ folders? into old: project version \d+\n$/);
  const guide = await u.run(['cat', 'old/guide.md', '--project', 'Copy']);
  t.is(guide.stdout, '# Guide\n\nhéllo ✓\n', 'the content of that version');
  const blob = await u.run(['cat', 'old/data/blob.bin', '--project', 'Copy']);
  t.deepEqual(blob.stdoutBytes, binary);
});

test.serial('import --mode replace moves what the archive lacks to the trash', async (t) => {
  const tgz = join(local, 'deep.tgz');
  t.is((await u.run(['export', 'docs/deep', '-o', tgz])).code, 0);
  t.is(readFileSync(tgz)[0], 0x1f, 'the format from the name: tar.gz');
  const r = await u.run(['import', tgz, 'copy', '--project', 'Copy', '--mode', 'replace']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^Imported 1 file and 0 folders into copy, \d+ nodes? moved to the trash: project version \d+\n$/);
  const tree = await flatTree('Copy', 'copy');
  t.deepEqual(
    tree.map((n) => n.path),
    ['conf.json'],
  );
});

test('a zip with entries over 1 MiB (streamed) and small ones (read through a window) imports byte for byte', async (t) => {
  const big = randomBytes(1536 * 1024);
  const stored = Buffer.alloc(1200 * 1024, 'abc');
  const parts = [{ name: 'big.bin', data: big }, ...Array.from({ length: 30 }, (_, i) => ({ name: `s/${i}.txt`, data: Buffer.from(`small ${i}\n`.repeat(i)) })), { name: 'z.txt', data: stored }];
  const zip = join(local, 'mixed.zip');
  writeFileSync(zip, makeZip(parts));
  const r = await u.run(['import', zip, 'mixed', '--project', 'Copy', '--json']);
  t.is(r.code, 0, r.stderr);
  t.like(r.json, { changed: true, files: 32 });
  const [b, s7, z] = await Promise.all([
    u.run(['cat', 'mixed/big.bin', '--project', 'Copy']),
    u.run(['cat', 'mixed/s/7.txt', '--project', 'Copy']),
    u.run(['cat', 'mixed/z.txt', '--project', 'Copy']),
  ]);
  t.deepEqual(b.stdoutBytes, big);
  t.is(s7.stdout, 'small 7\n'.repeat(7));
  t.deepEqual(z.stdoutBytes, stored);
});

test('errors: exit statuses, messages, and nothing left behind', async (t) => {
  const notArchive = join(local, 'notes.txt');
  writeFileSync(notArchive, 'just text');
  const missingOut = join(local, 'missing.zip');
  const [missing, bad, mode, format, noFile, tty] = await Promise.all([
    u.run(['export', 'nope', '-o', missingOut]),
    u.run(['import', notArchive, 'x']),
    u.run(['import', notArchive, '--mode', 'overwrite']),
    u.run(['export', '--format', 'rar', '-o', join(local, 'x.rar')]),
    u.run(['import', join(local, 'absent.zip')]),
    u.run(['export', 'docs', '--json']),
  ]);
  t.is(missing.code, 4, missing.stderr);
  t.false(existsSync(missingOut));
  t.false(existsSync(`${missingOut}.part`), 'no partial download');
  t.is(bad.code, 2);
  t.regex(bad.stderr, /neither a zip nor a tar\.gz/);
  t.is(mode.code, 2);
  t.regex(mode.stderr, /--mode must be merge or replace/);
  t.is(format.code, 2);
  t.regex(format.stderr, /--format must be zip or tar\.gz/);
  t.is(noFile.code, 2);
  t.regex(noFile.stderr, /is not a file/);
  t.is(tty.code, 2, 'no archive and a JSON summary on the same stdout');

  // A read-only key limited to a folder: exports inside it, imports nothing, exports nothing outside.
  const { key } = await createKey(server, token, projectId, { scope_path: 'docs', mode: 'read' });
  const reader = new CliUser({ CNS_SERVER: server.url, CNS_TOKEN: key });
  try {
    const zip = join(local, 'scoped.zip');
    const [inside, outside, write] = await Promise.all([
      reader.run(['export', 'docs/deep', '-o', zip]),
      reader.run(['export', '-o', join(local, 'all.zip')]),
      reader.run(['import', join(local, 'docs.zip'), 'docs/again']),
    ]);
    t.is(inside.code, 0, inside.stderr);
    t.is(outside.code, 3);
    t.false(existsSync(join(local, 'all.zip')));
    t.is(write.code, 3);
  } finally {
    reader.dispose();
  }
});
