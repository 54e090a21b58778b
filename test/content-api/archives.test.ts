import test from 'ava';
import { fetchArchive, importArchiveVia, makeTarGz, makeZip } from '../helpers/archives.ts';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;
let orgId: string;
let firstVersion: number;

const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);

test.before(async () => {
  server = await startTestServer({ importMaxFiles: 50, importMaxBytes: 200_000, maxUploadBytes: 300_000 });
  token = (await server.login()).token;
  ({ projectId: pid, orgId } = await defaultProject(server, token));
  const w = await server.api('POST', `/content/${pid}/bulk-write`, {
    token,
    body: {
      files: [
        { path: 'docs/guide.md', content: '# Guide\n\nhéllo ✓\n', node_type: 'markdown' },
        { path: 'docs/deep/conf.json', content: { a: 1, list: [1, 2, { b: 'c' }], f: 1.5, s: 'ünï' }, node_type: 'json' },
        { path: 'data/blob.bin', content: binary.toString('base64'), node_type: 'file' },
        { path: 'data/notes.txt', content: Buffer.from('plain text\n').toString('base64'), node_type: 'file' },
        { path: 'private/secret.md', content: 'secret', node_type: 'markdown' },
      ],
    },
  });
  if (w.status !== 200) throw new Error(JSON.stringify(w.body));
  firstVersion = w.body.data.project_version;
  await server.api('POST', `/content/${pid}/mkdir`, { token, body: { path: 'docs/empty' } });
  await server.api('POST', `/content/${pid}/write`, { token, body: { path: 'docs/guide.md', content: '# Guide v2\n', node_type: 'markdown' } });
  await server.api('POST', `/content/${pid}/write`, { token, body: { path: 'gone.md', content: 'to trash', node_type: 'markdown' } });
  await server.api('POST', `/content/${pid}/rm`, { token, body: { path: 'gone.md' } });
});
test.after.always(() => server.stop());

type Flat = { path: string; type: string; content_hash: string | null };
/** Every node beneath `path`, by path relative to it, with its type and content hash (a folder's: its git tree). */
async function flatTree(projectId: string, path = ''): Promise<Flat[]> {
  const res = await server.api('GET', `/content/${projectId}/tree?path=${encodeURIComponent(path)}&max_depth=-1`, { token });
  const out: Flat[] = [];
  const walk = (n: { path: string; type: string; content_hash: string | null; children?: unknown[] | null }) => {
    for (const c of (n.children ?? []) as (typeof n)[]) {
      out.push({ path: path ? c.path.slice(path.length + 1) : c.path, type: c.type, content_hash: c.content_hash });
      walk(c);
    }
  };
  walk(res.body.data);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

const projectVersion = async (projectId: string) => (await server.api('GET', `/projects/${projectId}/dashboard`, { token })).body.data.commits as number;

test.serial('export as zip then import into another project: identical content in one commit', async (t) => {
  const zip = await fetchArchive(server, token, pid, 'format=zip');
  t.is(zip.status, 200);
  t.is(zip.headers.get('content-type'), 'application/zip');
  t.truthy(zip.headers.get('x-cns-project-version'));
  const other = await createProject(server, token, orgId, 'copy-zip');
  const before = await projectVersion(other);
  const r = await importArchiveVia(server, token, other, zip.bytes);
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.data.files, 5);
  t.is(await projectVersion(other), before + 1, 'one commit');
  const source = await flatTree(pid);
  t.deepEqual(await flatTree(other), source.filter((n) => !n.path.startsWith('.trash')), 'same paths, kinds and bytes; no trash');
  t.true(source.some((n) => n.path === 'docs/empty' && n.type === 'folder'));
  const kinds = Object.fromEntries((await flatTree(other)).map((n) => [n.path, n.type]));
  t.like(kinds, { 'docs/guide.md': 'markdown', 'docs/deep/conf.json': 'json', 'data/blob.bin': 'file', 'docs/empty': 'folder' });
});

test.serial('a folder as tar.gz at an older version, imported beneath a folder of another project', async (t) => {
  const tgz = await fetchArchive(server, token, pid, `format=tar.gz&path=docs&version=${firstVersion}`);
  t.is(tgz.status, 200);
  t.is(tgz.headers.get('x-cns-project-version'), String(firstVersion));
  const other = await createProject(server, token, orgId, 'copy-tgz');
  const r = await importArchiveVia(server, token, other, tgz.bytes, { path: 'imported/docs' }, 'docs.tar.gz');
  t.is(r.status, 200, JSON.stringify(r.body));
  const cat = await server.api('GET', `/content/${other}/cat?path=imported/docs/guide.md`, { token });
  t.is(cat.body.data.content_text ?? cat.body.data.content, '# Guide\n\nhéllo ✓\n', 'the content of that version');
  t.false((await flatTree(other, 'imported/docs')).some((n) => n.path === 'empty'), 'the empty folder came later');
});

test.serial('export as tar.gz then import: identical content, files streamed into the repository', async (t) => {
  const tgz = await fetchArchive(server, token, pid, 'format=tar.gz');
  t.is(tgz.status, 200);
  t.is(tgz.headers.get('content-type'), 'application/gzip');
  const other = await createProject(server, token, orgId, 'copy-tgz-root');
  const r = await importArchiveVia(server, token, other, tgz.bytes, {}, 'all.tar.gz');
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(await flatTree(other), (await flatTree(pid)).filter((n) => !n.path.startsWith('.trash')));
});

test.serial('replace moves what the archive does not hold to the trash; merge keeps it', async (t) => {
  const other = await createProject(server, token, orgId, 'replace');
  await server.api('POST', `/content/${other}/bulk-write`, { token, body: { files: [{ path: 'f/keep.md', content: 'k', node_type: 'markdown' }, { path: 'f/old.md', content: 'o', node_type: 'markdown' }, { path: 'outside.md', content: 'x', node_type: 'markdown' }] } });
  const zip = makeZip([{ name: 'keep.md', data: Buffer.from('new') }, { name: 'sub/', data: undefined }]);
  const merged = await importArchiveVia(server, token, other, zip, { path: 'f', mode: 'merge' });
  t.is(merged.status, 200, JSON.stringify(merged.body));
  t.deepEqual((await flatTree(other, 'f')).map((n) => n.path), ['keep.md', 'old.md', 'sub']);
  const replaced = await importArchiveVia(server, token, other, zip, { path: 'f', mode: 'replace' });
  t.is(replaced.status, 200);
  t.is(replaced.body.data.removed, 1);
  t.deepEqual((await flatTree(other, 'f')).map((n) => n.path), ['keep.md', 'sub']);
  t.is((await server.api('GET', `/content/${other}/cat?path=outside.md`, { token })).status, 200, 'outside the target: untouched');
});

test.serial('archive errors: unknown version or path 404, bad format 422, the trash 422', async (t) => {
  t.is((await fetchArchive(server, token, pid, 'version=999')).status, 404);
  t.is((await fetchArchive(server, token, pid, 'path=nope')).status, 404);
  t.is((await fetchArchive(server, token, pid, 'path=docs/guide.md')).status, 404, 'a file is not a folder');
  t.is((await fetchArchive(server, token, pid, 'format=rar')).status, 422);
  t.is((await fetchArchive(server, token, pid, 'path=.trash')).status, 422);
});

test.serial('a key limited to a folder archives and imports only inside it', async (t) => {
  const { key } = await createKey(server, token, pid, { scope_path: 'docs' });
  t.is((await fetchArchive(server, key, pid, '')).status, 403);
  t.is((await fetchArchive(server, key, pid, 'path=private')).status, 403);
  const inside = await fetchArchive(server, key, pid, 'path=docs&format=tar.gz');
  t.is(inside.status, 200);
  const zip = makeZip([{ name: 'x.md', data: Buffer.from('x') }]);
  t.is((await importArchiveVia(server, key, pid, zip, { path: 'private' })).status, 403);
  t.is((await importArchiveVia(server, key, pid, zip, {})).status, 403, 'the project root is outside its scope');
  t.is((await importArchiveVia(server, key, pid, zip, { path: 'docs/in' })).status, 200);
});

/** The zip with its first entry's CRC (in the central directory) off by one bit. */
function badCrc(zip: Buffer): Buffer {
  const out = Buffer.from(zip);
  const cd = out.readUInt32LE(out.length - 22 + 16);
  out.writeUInt32LE((out.readUInt32LE(cd + 16) ^ 1) >>> 0, cd + 16);
  return out;
}

test.serial('every import limit refuses the archive and writes nothing', async (t) => {
  const other = await createProject(server, token, orgId, 'limits');
  const v0 = await projectVersion(other);
  const cases: [string, Buffer, number, RegExp][] = [
    ['too many entries', makeZip(Array.from({ length: 51 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from('x') }))), 413, /entries/],
    ['declared inflated size over the limit', makeZip([{ name: 'big.txt', data: Buffer.from('x'), declaredSize: 300_000 }]), 413, /declares/],
    ['real inflated size over the declared one (a bomb)', makeZip([{ name: 'bomb.txt', data: Buffer.alloc(250_000, 65), declaredSize: 10 }]), 413, /more than/],
    ['path traversal', makeZip([{ name: '../evil.txt', data: Buffer.from('x') }]), 422, /outside the archive/],
    ['absolute path', makeZip([{ name: '/etc/evil.txt', data: Buffer.from('x') }]), 422, /absolute/],
    ['symbolic link in a zip', makeZip([{ name: 'ok.txt', data: Buffer.from('x') }, { name: 'link', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 }]), 422, /symbolic link/],
    ['symbolic link in a tar.gz', await makeTarGz([{ name: 'ok.txt', data: 'x' }, { name: 'link', type: 'symlink', linkname: '/etc/passwd' }]), 422, /link/],
    ['tar.gz bomb', await makeTarGz([{ name: 'big.txt', data: 'y'.repeat(250_000) }]), 413, /more than/],
    ['not an archive', Buffer.from('just some text'), 422, /neither a zip nor a tar.gz/],
    ['a wrong checksum', badCrc(makeZip([{ name: 'a.txt', data: Buffer.from('hello hello hello') }])), 422, /damaged/],
    ['a damaged zip', makeZip([{ name: 'a.txt', data: Buffer.from('hello hello hello') }]).subarray(0, 40), 422, /./],
    ['a .git path', makeZip([{ name: '.git/config', data: Buffer.from('x') }]), 422, /cannot be a node/],
    ['upload over CNS_MAX_UPLOAD_BYTES', Buffer.concat([makeZip([{ name: 'a.txt', data: Buffer.from('a') }]), Buffer.alloc(310_000)]), 413, /larger/],
  ];
  for (const [what, archive, status, message] of cases) {
    const r = await importArchiveVia(server, token, other, archive, { path: 'target' });
    t.is(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
    t.regex(r.body.message, message, what);
  }
  t.is(await projectVersion(other), v0, 'nothing was written');
  t.is((await server.api('GET', `/content/${other}/stat?path=target`, { token })).status, 404);
});

test.serial('import refuses a bad mode and a target that is a file', async (t) => {
  const zip = makeZip([{ name: 'a.md', data: Buffer.from('a') }]);
  t.is((await importArchiveVia(server, token, pid, zip, { mode: 'overwrite' })).status, 422);
  t.is((await importArchiveVia(server, token, pid, zip, { path: 'docs/guide.md' })).status, 422);
});
