import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from './harness.ts';

let server: TestServer;
let u: CliUser;
let firstProject: string;
const work = mkdtempSync(join(tmpdir(), 'cns-cli-clone-'));

test.before(async () => {
  server = await startTestServer();
  u = new CliUser();
  await u.login(server);
  firstProject = (await u.run(['projects', '--json'])).json.default_project_id;
});
test.after.always(async () => {
  u?.dispose();
  rmSync(work, { recursive: true, force: true });
  await server?.stop();
});

test.serial('projects create, ls, use (by name), --project, CNS_PROJECT and rm', async (t) => {
  const created = await u.run(['projects', 'create', 'Research', '--description', 'papers']);
  t.regex(created.stdout, /^Created project Research \((prj_\w+)\); make it the default with `cns use prj_\w+`\n$/);
  const researchId = created.stdout.match(/\((prj_\w+)\)/)![1]!;
  const [ls, lsJson] = await Promise.all([u.run(['projects']), u.run(['projects', 'ls', '--json'])]);
  t.regex(ls.stdout, /^\s+ID\s+NAME\s+ROLE\s+UPDATED\n/);
  t.regex(ls.stdout, new RegExp(`\\n\\*\\s+${firstProject}\\s+First project\\s+admin\\s`));
  t.regex(ls.stdout, new RegExp(`\\n\\s+${researchId}\\s+Research\\s+admin\\s`));
  t.is(lsJson.json.default_project_id, firstProject);
  t.deepEqual(lsJson.json.projects.map((p: { name: string }) => p.name).sort(), ['First project', 'Research']);

  const use = await u.run(['use', 'Research']);
  t.is(use.stdout, `Default project on ${server.url} is now Research (${researchId})\n`);
  await u.run(['write', 'paper.md'], { input: 'in research' });
  const [inResearch, inFirstByFlag, inFirstByEnv, unknown] = await Promise.all([
    u.run(['ls', '--json']),
    u.run(['ls', '--json', '--project', 'First project']),
    u.run(['ls', '--json'], { env: { CNS_PROJECT: firstProject } }),
    u.run(['ls', '--project', 'Nope']),
  ]);
  t.deepEqual(inResearch.json.entries.map((e: { name: string }) => e.name), ['paper.md']);
  t.false(inFirstByFlag.json.entries.some((e: { name: string }) => e.name === 'paper.md'));
  t.deepEqual(inFirstByEnv.json, inFirstByFlag.json);
  t.is(unknown.code, 4);
  t.regex(unknown.stderr, /no project named "Nope"/);

  const refused = await u.run(['projects', 'rm', 'Research']);
  t.is(refused.code, 2, 'no confirmation without a terminal or --yes');
  const rm = await u.run(['projects', 'rm', researchId, '--yes', '--json']);
  t.deepEqual(rm.json, { id: researchId, deleted: true });
  const [useDeleted, noDefault] = await Promise.all([u.run(['use', researchId]), u.run(['ls'])]);
  t.is(useDeleted.code, 4);
  t.is(noDefault.code, 2, 'deleting the default project forgets it');
  t.regex(noDefault.stderr, /no project: pass --project PROJECT or set a default with `cns use PROJECT`/);
  await u.run(['use', firstProject]);
});

test.serial('keys create, ls and revoke; a key is held to its scope and mode', async (t) => {
  await u.run(['write', 'docs/guide.md'], { input: 'guide' });
  const created = await u.run(['keys', 'create', 'reader', '--scope', '/docs', '--read-only']);
  t.is(created.code, 0, created.stderr);
  const [line1, key, line3] = created.stdout.trimEnd().split('\n');
  t.regex(line1!, /^Created key "reader" \(con_\w+\): scope \/docs, read-only$/);
  t.regex(key!, /^cns_\S+$/);
  t.regex(line3!, /shown only this once/);
  const json = await u.run(['keys', 'create', 'writer', '--json']);
  t.like(json.json, { connection: { name: 'writer', scope_path: '', mode: 'read_write', kind: 'api' } });
  t.regex(json.json.key, /^cns_/);

  const [ls, lsJson] = await Promise.all([u.run(['keys']), u.run(['keys', 'ls', '--json'])]);
  t.regex(ls.stdout, /^ID\s+NAME\s+SCOPE\s+MODE\s+STATUS\s+KEY\s+LAST USED\n/);
  t.regex(ls.stdout, /con_\w+\s+reader\s+\/docs\s+read\s+active\s+cns_\S+…/);
  t.is(lsJson.json.connections.length, 2);

  const asKey = { env: { CNS_TOKEN: key! } };
  const [cat, outside, write] = await Promise.all([
    u.run(['cat', 'docs/guide.md'], asKey),
    u.run(['ls', 'elsewhere'], asKey),
    u.run(['write', 'docs/new.md'], { ...asKey, input: 'x' }),
  ]);
  t.is(cat.stdout, 'guide', 'a key uses its own project without --project');
  t.is(outside.code, 3);
  t.is(write.code, 3);
  const readerId = line1!.match(/\((con_\w+)\)/)![1]!;
  const revoke = await u.run(['keys', 'revoke', readerId]);
  t.is(revoke.stdout, `Revoked key ${readerId}: it no longer works\n`);
  const [after, again] = await Promise.all([u.run(['whoami'], asKey), u.run(['keys', 'revoke', readerId])]);
  t.is(after.code, 3);
  t.is(again.code, 4);
});

test('clone runs git clone with cns as the credential helper', async (t) => {
  await u.run(['write', 'clone/me.md', '--project', firstProject], { input: '# cloned\n' });
  const dir = join(work, 'copy');
  const [r, missing] = await Promise.all([
    u.run(['clone', firstProject, dir, '--json']),
    u.run(['clone', 'No such project', join(work, 'none')]),
  ]);
  t.is(r.code, 0, r.stderr);
  t.like(r.json, { project_id: firstProject, name: 'First project', url: `${server.url}/git/${firstProject}.git`, directory: dir });
  t.is(readFileSync(join(dir, 'clone/me.md'), 'utf8'), '# cloned\n');
  t.regex(readFileSync(join(dir, '.git/config'), 'utf8'), /helper = !'.+' '.+bin\/cns\.js' git-credential/);
  t.is(missing.code, 4);
  t.false(existsSync(join(work, 'none')));
});

test('the clone scopes its credential helper to the server, so CNS_TOKEN never reaches another host', async (t) => {
  const dir = join(work, 'scoped');
  const r = await u.run(['clone', firstProject, dir]);
  t.is(r.code, 0, r.stderr);
  const config = readFileSync(join(dir, '.git/config'), 'utf8');
  t.true(config.includes(`[credential "${server.url}"]`), config);
  t.notRegex(config, /\[credential\]/, 'no helper for every host');
  const home = mkdtempSync(join(tmpdir(), 'cns-cli-home-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const secret = 'cns_SECRETFORTHECNSSERVERONLY';
  const fill = (host: string, protocol = 'https') =>
    spawnSync('git', ['credential', 'fill'], {
      cwd: dir,
      input: `protocol=${protocol}\nhost=${host}\n\n`,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', CNS_TOKEN: secret },
    });
  const other = fill('github.com');
  t.false(other.stdout.includes(secret), other.stdout);
  const own = fill(new URL(server.url).host, 'http');
  t.true(own.stdout.includes(`password=${secret}`), own.stdout + own.stderr);
});
