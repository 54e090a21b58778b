import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { hostname } from 'node:os';
import { CommandContext } from '../../src/cli/client/context.ts';
import { bindFolder } from '../../src/cli/sync/folderBinding.ts';
import { SyncEngine } from '../../src/cli/sync/syncEngine.ts';
import Database from 'better-sqlite3';
import { runMigrations } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { folderSyncNamesMigration } from '../../src/db/migrations/022_folder_sync_names.ts';
import { cns, folderWith, put, startWorld, type World } from './helpers.ts';
import { memoryIo } from '../helpers/cliIo.ts';

// Issue 28 point 20: a folder sync is named by the user's choice or the host name only; the
// folder's local path never reaches its name, its config or the project's history.

let w: World;
test.before(async () => {
  w = await startWorld();
});
test.after.always(async () => {
  await w?.server.stop();
});

/** Everything a project shows of who changed what: commits, node versions, audit, changelog, syncs, connections, git log. */
async function history(path: string): Promise<string> {
  const api = async (route: string) => JSON.stringify((await w.server.api('GET', route, { token: w.token })).body);
  const repo = readdirSync(w.server.dataDir).find((f) => f.startsWith(w.projectId) && f.endsWith('.git'))!;
  return [
    await api(`/content/${w.projectId}/versions?limit=1000`),
    await api(`/content/${w.projectId}/versions?path=${encodeURIComponent(path)}`),
    await api(`/projects/${w.projectId}/audit-logs?limit=1000`),
    await api(`/sync/changelog?project_id=${w.projectId}`),
    await api(`/sync/syncs?project_id=${w.projectId}`),
    await api(`/connections/?project_id=${w.projectId}`),
    execFileSync('git', ['--git-dir', join(w.server.dataDir, repo), 'log', '--format=%an <%ae>%n%cn%n%B'], { encoding: 'utf8' }),
  ].join('\n');
}

async function syncOf(id: string) {
  const list = await w.server.api('GET', `/sync/syncs?project_id=${w.projectId}`, { token: w.token });
  return list.body.data.syncs.find((s: { id: string }) => s.id === id) as { name: string; config: Record<string, unknown> };
}

test('by default a folder sync is named after the host only, and its history never holds the local path', async (t) => {
  const dir = folderWith({ 'notes.md': '# notes\n' });
  const ctx = new CommandContext({ server: w.server.url, token: w.token, project: w.projectId }, memoryIo().io);
  const store = await bindFolder(ctx, dir, { path: 'by-host' });
  const engine = new SyncEngine(store, { progress: false });
  await engine.cycle();
  put(dir, 'notes.md', '# notes\nedited\n');
  await engine.cycle();

  const sync = await syncOf(store.readConfig().syncId);
  t.is(sync.name, `folder ${hostname()}`);
  t.false('folder' in sync.config);
  const versions = (await w.server.api('GET', `/content/${w.projectId}/versions?path=by-host/notes.md`, { token: w.token })).body.data.versions;
  t.is(versions.length, 2);
  t.true(versions.every((v: { author: string }) => v.author === `agent:folder ${hostname()}`), JSON.stringify(versions));
  const seen = await history('by-host/notes.md');
  t.false(seen.includes(dir), 'the full local path');
  t.false(seen.includes(basename(dir)), 'the local folder name');
});

test('cns sync --name names the sync and the author of its versions; --name on a bound folder is refused unless the same', async (t) => {
  const dir = folderWith({ 'plan.md': 'plan\n' });
  const first = await cns(w, ['sync', dir, '--project', w.projectId, '--path', 'named', '--name', 'work laptop']);
  t.is(first.code, 0, first.stderr);
  const config = JSON.parse(readFileSync(join(dir, '.cns/config.json'), 'utf8'));
  t.is((await syncOf(config.syncId)).name, 'work laptop');
  const versions = (await w.server.api('GET', `/content/${w.projectId}/versions?path=named/plan.md`, { token: w.token })).body.data.versions;
  t.is(versions[0].author, 'agent:work laptop');
  const seen = await history('named/plan.md');
  t.false(seen.includes(dir));
  t.false(seen.includes(basename(dir)));

  t.is((await cns(w, ['sync', dir, '--name', 'work laptop'])).code, 0);
  const renamed = await cns(w, ['sync', dir, '--name', 'other']);
  t.is(renamed.code, 2, renamed.stderr);
  t.regex(renamed.stderr, /first run only/);
});

test('folder syncs made before keep no local path: their default name drops it, a chosen name stays', (t) => {
  // A database as earlier versions left it (every migration before this one), with their folder syncs.
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.pragma('foreign_keys = OFF'); // connections without their project and creator rows
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((x) => x.version < folderSyncNamesMigration.version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, '');
  }
  const insert = db.prepare(
    `INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, config, created_at, updated_at) VALUES (?, 'p1', 'sync', ?, 'read_write', ?, 'cns_', ?, '', '')`,
  );
  const folderConfig = (extra: Record<string, string>) => JSON.stringify({ provider: 'folder', path: 'x', ...extra });
  insert.run('c1', 'folder laptop:/home/ada/notes', 'h1', folderConfig({ host: 'laptop', folder: '/home/ada/notes' }));
  insert.run('c2', 'folder /home/ada/other', 'h2', folderConfig({ folder: '/home/ada/other' }));
  insert.run('c3', 'my notes', 'h3', folderConfig({ host: 'laptop', folder: '/home/ada/mine' }));
  insert.run('c4', 'url https://example.com/', 'h4', JSON.stringify({ provider: 'url', url: 'https://example.com/', path: 'p.md', folder: 'kept' }));
  runMigrations(db);
  const rows = db.prepare('SELECT id, name, config FROM connections ORDER BY id').all() as { id: string; name: string; config: string }[];
  t.deepEqual(
    rows.map((r) => [r.id, r.name, JSON.parse(r.config).folder ?? null]),
    [
      ['c1', 'folder laptop', null],
      ['c2', 'folder', null],
      ['c3', 'my notes', null],
      ['c4', 'url https://example.com/', 'kept'],
    ],
  );
});
