import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskStore } from '../../src/ingest/queue/taskStore.ts';
import { RECOVERED_WARNING } from '../../src/ingest/queue/taskRunner.ts';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer } from '../helpers/server.ts';
import { submitFiles, waitTask } from './ingestClient.ts';

/**
 * Ingest success crosses from the content core to the metadata store (issue 30): the task's
 * commit names it, then success and result are recorded together. A stop between the two
 * leaves the task running with its content written; the next start finds the commit and
 * finishes the task from it, without converting or writing the file again.
 */
test('a task whose success could not be recorded after its commit is finished from the commit at the next start, written once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-ingest-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CNS_INGEST_WORKERS: '1' };
  const first = await startTestServer({ dataDir }, env);
  const token = (await first.login()).token;
  const { projectId } = await defaultProject(first, token);

  const succeed = TaskStore.prototype.succeed;
  let failures = 1;
  TaskStore.prototype.succeed = async function (id, result) {
    if (failures-- > 0) throw new Error('the metadata store went away');
    return succeed.call(this, id, result);
  };
  t.teardown(() => {
    TaskStore.prototype.succeed = succeed;
  });
  const res = await submitFiles(first, token, { project_id: projectId, path: 'crash' }, [{ name: 'notes.txt', content: 'written once', type: 'text/plain' }]);
  t.is(res.status, 202, JSON.stringify(res.body));
  const id = res.body.data.tasks[0].id as string;
  const committed = await waitTask(first, token, id, () => first.services.content.findByPath(projectId, 'crash/notes.md') !== null);
  t.is(committed.status, 'running', 'committed, its success not recorded');
  t.is(committed.result, null);
  const head = first.services.content.head(projectId)!;
  await first.stop();

  const second = await startTestServer({ dataDir }, env);
  t.teardown(() => second.stop());
  const token2 = (await second.login()).token;
  const done = await waitTask(second, token2, id);
  t.is(done.status, 'succeeded');
  t.deepEqual(done.result.nodes.map((n: { path: string; version: number }) => [n.path, n.version]), [['crash/notes.md', 1]]);
  t.deepEqual(done.result.warnings, [RECOVERED_WARNING]);
  t.is(done.result.project_version, head.projectVersion);
  t.is(second.services.content.head(projectId)!.commitId, head.commitId, 'no commit after the first: not written again');
  const cat = await second.api('GET', `/content/${projectId}/cat?path=crash/notes.md`, { token: token2 });
  t.is(cat.body.data.content, 'written once');
});
