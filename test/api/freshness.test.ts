import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { spawnServe } from '../helpers/cli.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseOfDataDir } from '../helpers/serverDatabases.ts';
import { createKey, createOrg, createProject, email } from './fixtures.ts';

/**
 * The look-ups every request repeats (user, key, project and role, sign-in, node by path) are
 * kept in memory while the database is unchanged (src/db/freshCache.ts). Several processes will
 * share one database: a change committed by ANOTHER connection (here a second better-sqlite3
 * connection to the same cns.db, or a second `cns serve` on the same data folder) must count
 * on the very next request, after the same request was answered (and its rows kept) before.
 * With the metadata on PostgreSQL (CNS_TEST_ENGINE=postgres) the other connection is a second
 * PostgreSQL session: its commit reaches this process by the schema's NOTIFY, asynchronously, so
 * each test waits for that notification (the store's generation moving), then asks once.
 */

let server: TestServer;
/** Another connection to cns.db: the content index (and the metadata on SQLite). */
let other: Database.Database;
/** Another connection to the metadata: cns.db on SQLite, a session of its own on PostgreSQL. */
let otherMetadata: pg.Client | null = null;
let admin: string;
let projectId: string;
/** The environment that points a second `cns serve` at the same metadata (empty on SQLite). */
let engineEnv: Record<string, string>;

/** Runs one write on the metadata through the other connection (`?` placeholders) and answers the rows it changed; on PostgreSQL, once this process has been notified. */
async function otherWrites(statement: string, ...params: unknown[]): Promise<number> {
  if (!otherMetadata) return other.prepare(statement).run(...params).changes;
  const changes = server.services.metadata.changes;
  const before = changes.generation();
  let n = 0;
  const { rowCount } = await otherMetadata.query(statement.replace(/\?/g, () => `$${++n}`), params);
  for (const deadline = Date.now() + 10_000; changes.generation() === before; ) {
    if (Date.now() > deadline) throw new Error('no notification of the other connection\'s commit within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return rowCount ?? 0;
}

test.before(async () => {
  // No analytics: its flush is a write of this process, which would hide a missed change of another's.
  server = await startTestServer({ analytics: false });
  other = new Database(join(server.dataDir, 'cns.db'));
  other.pragma('busy_timeout = 5000');
  other.pragma('foreign_keys = ON');
  engineEnv = await databaseOfDataDir(server.dataDir);
  if (engineEnv.CNS_DATABASE_URL) {
    otherMetadata = new pg.Client({ connectionString: engineEnv.CNS_DATABASE_URL });
    await otherMetadata.connect();
  }
  admin = (await server.login()).token;
  projectId = await createProject(server, admin, await createOrg(server, admin));
  for (const path of ['docs/a.md', 'docs/sub/b.md']) {
    const res = await server.api('POST', `/content/${projectId}/write`, { token: admin, body: { path, content: `# ${path}\n`, node_type: 'markdown' } });
    if (res.status !== 201) throw new Error(`write ${path}: ${res.status}`);
  }
});
test.after.always(async () => {
  other?.close();
  await otherMetadata?.end();
  await server?.stop();
});

const cat = (token: string, path = 'docs/a.md', via = server) => via.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const write = (token: string, path: string, content: string) =>
  server.api('POST', `/content/${projectId}/write`, { token, body: { path, content, node_type: 'markdown' } });
/** The same request twice, so that what it looked up is kept before the change. */
async function answeredTwice(t: import('ava').ExecutionContext, request: () => Promise<{ status: number }>, status = 200) {
  t.is((await request()).status, status);
  t.is((await request()).status, status);
}

test.serial('a key revoked by another connection is refused on the next request', async (t) => {
  const { id, key } = await createKey(server, admin, projectId, { mode: 'read', scope_path: 'docs' });
  await answeredTwice(t, () => cat(key));
  await otherWrites("UPDATE connections SET status = 'revoked' WHERE id = ?", id);
  t.is((await cat(key)).status, 401);
});

test.serial("a key's scope narrowed by another connection counts on the next request", async (t) => {
  const { id, key } = await createKey(server, admin, projectId, { mode: 'read', scope_path: 'docs' });
  await answeredTwice(t, () => cat(key));
  await otherWrites('UPDATE connections SET scope_path = ? WHERE id = ?', 'docs/sub', id);
  t.is((await cat(key)).status, 403);
  t.is((await cat(key, 'docs/sub/b.md')).status, 200);
});

test.serial('a role lowered, then a membership removed, by another connection count on the next request', async (t) => {
  const user = await server.createUser(email('member'));
  await otherWrites('INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', projectId, user.id, 'editor', new Date().toISOString());
  await answeredTwice(t, () => cat(user.token));
  t.is((await write(user.token, 'docs/by-editor.md', 'one')).status, 201);

  await otherWrites('UPDATE project_members SET role = ? WHERE project_id = ? AND user_id = ?', 'viewer', projectId, user.id);
  t.is((await write(user.token, 'docs/by-editor.md', 'two')).status, 403);
  await answeredTwice(t, () => cat(user.token));

  await otherWrites('DELETE FROM project_members WHERE project_id = ? AND user_id = ?', projectId, user.id);
  t.is((await cat(user.token)).status, 404);
});

test.serial('a user deleted by another connection is refused on the next request', async (t) => {
  const user = await server.createUser(email('deleted'));
  await otherWrites('INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', projectId, user.id, 'viewer', new Date().toISOString());
  await answeredTwice(t, () => cat(user.token));
  await answeredTwice(t, () => server.api('GET', '/auth/me', { token: user.token }));
  await otherWrites('DELETE FROM users WHERE id = ?', user.id);
  t.is((await server.api('GET', '/auth/me', { token: user.token })).status, 401);
  t.is((await cat(user.token)).status, 401);
});

test.serial('a sign-in revoked by another connection ends its session token on the next request', async (t) => {
  const login = await server.api('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, session: 'cookie' } });
  t.is(login.status, 200);
  const access = /cns_access=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
  await answeredTwice(t, () => cat(access));
  const changes = await otherWrites('UPDATE refresh_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND created_at >= ?', new Date().toISOString(), new Date(Date.now() - 60_000).toISOString());
  t.true(changes >= 1);
  t.is((await cat(access)).status, 401);
});

test.serial("a node's row changed or removed by another connection is seen on the next request", async (t) => {
  await write(admin, 'docs/moving.md', 'moving\n');
  await answeredTwice(t, () => cat(admin, 'docs/moving.md'));
  other.prepare("UPDATE nodes SET path = 'docs/moved.md', name = 'moved.md' WHERE project_id = ? AND path = 'docs/moving.md'").run(projectId);
  t.is((await cat(admin, 'docs/moving.md')).status, 404);
  const moved = await cat(admin, 'docs/moved.md');
  t.is(moved.status, 200);
  t.is(moved.body.data.content, 'moving\n');
});

test.serial('a second `cns serve` on the same data folder: its new version and its removal are read by the first on the next request', async (t) => {
  const second = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', server.dataDir], { CNS_RATE_LIMIT_MAX: '0', ...engineEnv });
  t.teardown(() => second.child.kill('SIGKILL'));
  const [, url] = await second.waitFor(/listening on (http:\/\/\S+)/);
  // Both processes sign with the data folder's key: the administrator's token works on both.
  const viaSecond = (method: string, path: string, body?: unknown) => server.api(method, `${url}/api/v1${path}`, { token: admin, body });

  t.is((await write(admin, 'docs/shared.md', 'version one\n')).status, 201);
  await answeredTwice(t, () => cat(admin, 'docs/shared.md'));
  const first = await cat(admin, 'docs/shared.md');
  t.is(first.body.data.content, 'version one\n');

  const written = await viaSecond('POST', `/content/${projectId}/write`, { path: 'docs/shared.md', content: 'version two\n', node_type: 'markdown' });
  t.is(written.status, 200);
  const after = await cat(admin, 'docs/shared.md');
  t.is(after.status, 200);
  t.is(after.body.data.content, 'version two\n');
  t.is(after.body.data.version, first.body.data.version + 1);

  t.is((await viaSecond('POST', `/content/${projectId}/rm`, { path: 'docs/shared.md' })).status, 200);
  t.is((await cat(admin, 'docs/shared.md')).status, 404);

  second.child.kill('SIGTERM');
  t.is(await second.exited, 0);
});
