import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe } from '../helpers/cli.ts';
import { eventually, fastImportStream, GitClient } from './gitFixture.ts';

const ADMIN = { email: 'crash@example.com', password: 'crash-password-1' };

async function call(url: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as { data: Record<string, any> };
}

interface PushRow {
  actor_type: string;
  actor_id: string;
  details: string;
  created_at: string;
}

/** What the restarted service recorded for the push: the pushed versions' attribution and the audit row. */
function pushRecords(dataDir: string, projectId: string) {
  const db = new Database(join(dataDir, 'cns.db'), { readonly: true, fileMustExist: true });
  try {
    const versions = db
      .prepare(
        `SELECT actor_type, actor_id, created_at, COUNT(*) AS n FROM node_versions WHERE project_id = ?
         GROUP BY actor_type, actor_id, created_at`,
      )
      .all(projectId) as { actor_type: string; actor_id: string; created_at: string; n: number }[];
    const audit = db.prepare(`SELECT * FROM content_audit_log WHERE project_id = ? AND action = 'push'`).all(projectId) as PushRow[];
    const pending = (db.prepare('SELECT COUNT(*) AS n FROM content_pending_pushes WHERE project_id = ?').get(projectId) as { n: number }).n;
    return { versions, audit, pending };
  } finally {
    db.close();
  }
}

function indexState(dataDir: string, projectId: string): { head_commit: string | null; project_version: number } | undefined {
  const db = new Database(join(dataDir, 'cns.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT head_commit, project_version FROM content_index_state WHERE project_id = ?').get(projectId) as never;
  } finally {
    db.close();
  }
}

test('a service killed right after a push moved main indexes the push when it starts again', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-crash-'));
  const git = new GitClient();
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
    git.dispose();
  });
  // One process: SIGKILL then stops the whole service at once (with workers it would kill only the
  // primary, and the worker indexing the push would finish its turn; test/cluster/workerCrash has that case).
  const env = { CNS_ADMIN_EMAIL: ADMIN.email, CNS_ADMIN_PASSWORD: ADMIN.password, CNS_WORKERS: '1' };
  const first = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], env);
  t.teardown(async () => {
    first.child.kill('SIGKILL');
    await first.exited;
  });
  const [, url] = await first.waitFor(/listening on (http:\/\/\S+)/);
  const token: string = (await call(url!, '/auth/login', null, ADMIN)).data.access_token;
  const projectId: string = (await call(url!, '/auth/initialize', token, {})).data.project.id;

  // Enough commits that indexing takes a while after main has moved.
  const dir = git.dir('work');
  await git.ok(['init', '-q', dir]);
  await git.ok(['fast-import', '--quiet'], { cwd: dir, input: fastImportStream({ commits: 500, fileCount: 200, filesPerCommit: 3 }) });
  const tip = (await git.ok(['rev-parse', 'main'], { cwd: dir })).trim();

  const refFile = join(dataDir, `${projectId}.git`, 'refs', 'heads', 'main');
  const remote = `${url!.replace('://', `://cns:${token}@`)}/git/${projectId}.git`;
  const me = (await call(url!, '/auth/me', token)).data;
  const pushedAt = Date.now();
  const push = git.run(['push', remote, 'main'], { cwd: dir });
  await eventually('main to move', () => {
    try {
      return readFileSync(refFile, 'utf8').trim() === tip ? true : undefined;
    } catch {
      return undefined;
    }
  }, 60_000);
  const movedAt = Date.now();
  first.child.kill('SIGKILL');
  await first.exited;
  await push;
  const before = indexState(dataDir, projectId);
  t.not(before?.head_commit, tip, 'the service died before the push was fully indexed');

  const second = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], env);
  t.teardown(async () => {
    second.child.kill('SIGKILL');
    await second.exited;
  });
  await second.waitFor(/listening on (http:\/\/\S+)/, 60_000);
  const after = indexState(dataDir, projectId);
  t.is(after?.head_commit, tip);
  t.is(after?.project_version, 500);

  // Issue 5: the registration survived the crash, so the pushed commits belong to the credential
  // that pushed them, at the time the push arrived, and the push has its audit row.
  const records = pushRecords(dataDir, projectId);
  t.true(records.versions.length > 0);
  for (const v of records.versions) {
    t.deepEqual({ type: v.actor_type, id: v.actor_id }, { type: 'user', id: me.user.id }, `${v.n} versions`);
  }
  t.is(records.audit.length, 1, 'one push audit row');
  const entry = records.audit[0]!;
  t.deepEqual({ type: entry.actor_type, id: entry.actor_id }, { type: 'user', id: me.user.id });
  t.like(JSON.parse(entry.details), { ref: 'refs/heads/main', before: null, after: tip, commits: 500 });
  const arrival = Date.parse(entry.created_at);
  t.true(arrival >= pushedAt - 2000 && arrival <= movedAt + 2000, `push arrived at ${entry.created_at}`);
  const times = new Set(records.versions.map((v) => v.created_at));
  t.is(times.size, 1, 'every pushed version has the arrival time');
  t.true(Math.abs(Date.parse([...times][0]!) - arrival) <= 2000);
  t.is(records.pending, 0, 'the registration was consumed with the push');
});
