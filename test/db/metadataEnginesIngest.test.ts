import test from 'ava';
import { sql } from 'kysely';
import type { ContentAccess, ContentGrant } from '../../src/policies/contentAccess.ts';
import { Tables, tableDeleteTrailer } from '../../src/data/tables/tables.ts';
import { TableStore } from '../../src/data/tables/tableStore.ts';
import type { MetadataDb } from '../../src/db/metadata/metadataStore.ts';
import { isUniqueViolation } from '../../src/db/metadata/uniqueViolation.ts';
import { UploadGrants, type UploadGrantRow } from '../../src/domain/uploads/uploadGrants.ts';
import { IngestQueue } from '../../src/ingest/queue/ingestQueue.ts';
import type { SourceConverter } from '../../src/ingest/queue/sourceConverter.ts';
import { RECOVERED_WARNING, TaskRunner, taskTrailer } from '../../src/ingest/queue/taskRunner.ts';
import { TaskStore, type NewTask } from '../../src/ingest/queue/taskStore.ts';
import type { TaskResult } from '../../src/ingest/queue/taskTypes.ts';
import { IngestTemp } from '../../src/ingest/queue/tempFiles.ts';
import { RuleStore } from '../../src/ingest/rules/ruleStore.ts';
import { alice, fixture } from '../content/helpers.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

/**
 * Ingestion's tasks and rules, tables' records and upload addresses give the same answers on
 * SQLite and PostgreSQL: orderings by `seq`, the queue's claim and status changes as
 * compare-and-sets (one winner among concurrent callers), and the crash windows of the writes
 * that cross from the content core to the metadata store, each repaired by its resume or read.
 */

const NOW = '2026-01-01T00:00:00.000Z';
let n = 0;
function newTask(projectId = 'prj_1', created_at = NOW): NewTask {
  return {
    id: `ing_${String(++n).padStart(4, '0')}`,
    project_id: projectId,
    source: 'notes.txt',
    kind: 'file',
    target_path: 'in',
    mode: null,
    keep_original: false,
    rule_id: null,
    input: { file: 'source', size: 1, mime_type: 'text/plain' },
    created_by: 'usr_1',
    actor: alice,
    created_at,
  };
}

async function secondProject(db: MetadataDb, id = 'prj_2'): Promise<void> {
  await sql`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES (${id}, 'org_1', ${id}, ${NOW}, ${NOW})`.execute(db);
}

/** Polls `check` until true, or fails after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const engine of ENGINES) {
  test(`${engine}: ingest tasks: insert, find, lists newest first by seq, claims in seq order with projects taking turns, status compare-and-sets`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    await secondProject(metadata.db);
    const store = new TaskStore(metadata);
    // Same creation time, ids against insertion order: only seq can give the submission order.
    const [a, b, c] = [newTask(), newTask(), newTask('prj_2')];
    const [a1, b1] = [{ ...a, id: 'ing_z' }, { ...b, id: 'ing_a' }];
    await store.insert([a1, b1, c]);
    await store.insert([]);
    t.like(await store.find(a1.id), { status: 'queued', keep_original: false, input: a.input, actor: alice, progress: null, result: null, started_at: null });
    t.is(await store.find('ing_missing'), null);
    t.deepEqual((await store.summaries('prj_1')).map((x) => x.id), ['ing_a', 'ing_z'], 'newest first');
    t.deepEqual((await store.findMany(['ing_a', 'ing_missing', 'ing_z'])).map((x) => x.id), ['ing_a', 'ing_z'], 'in the order asked');
    t.deepEqual(await store.queuedProjects(), ['prj_1', 'prj_2']);
    t.is(await store.count('queued'), 3);

    const first = await store.claimNext(null);
    t.like(first, { id: 'ing_z', status: 'running' }, 'within a project, submission order');
    t.truthy(first!.started_at);
    const second = await store.claimNext('prj_1', new Map([['prj_1', 1]]));
    t.is(second!.id, c.id, 'the project with fewer running goes first');
    t.is((await store.claimNext('prj_2', new Map([['prj_1', 1], ['prj_2', 1]]), new Set(['prj_2']))), null, '`only` limits the claim');
    t.is((await store.claimNext('prj_2'))!.id, 'ing_a');
    t.is(await store.claimNext(null), null, 'nothing queued');
    t.deepEqual([...(await store.statusesOf(['ing_a', 'ing_z']))].sort(), [['ing_a', 'running'], ['ing_z', 'running']]);

    await store.setProgress('ing_z', { done: 1, total: 2, unit: 'pages' });
    t.deepEqual((await store.find('ing_z'))!.progress, { done: 1, total: 2, unit: 'pages' });
    const result: TaskResult = { nodes: [{ path: 'in/notes.md', node_id: 'nod_1', version: 1, type: 'markdown' }], warnings: [], project_version: 3 };
    t.true(await store.succeed('ing_z', result));
    t.false(await store.succeed('ing_z', result), 'succeeded once');
    t.like(await store.find('ing_z'), { status: 'succeeded', result });
    t.truthy((await store.find('ing_z'))!.finished_at);
    await store.setProgress('ing_z', { done: 2, total: 2, unit: 'pages' });
    t.deepEqual((await store.find('ing_z'))!.progress, { done: 1, total: 2, unit: 'pages' }, 'progress only while running');

    t.true(await store.transition('ing_a', 'running', 'queued'));
    t.like(await store.find('ing_a'), { status: 'queued', started_at: null, finished_at: null });
    t.true(await store.transition('ing_a', ['queued', 'running'], 'cancelled', { error: { code: 'cancelled', message: 'x' } }));
    t.false(await store.transition('ing_a', ['queued', 'running'], 'failed'), 'a finished task stays as it ended');
    t.like(await store.find('ing_a'), { status: 'cancelled', error: { code: 'cancelled', message: 'x' } });
    t.deepEqual((await store.summaries('prj_1', 'cancelled')).map((x) => x.id), ['ing_a']);
    t.deepEqual([...(await store.idsWithStatus('running'))], [c.id]);
    t.deepEqual((await store.running()).map((x) => x.id), [c.id]);
    await sql`DELETE FROM projects WHERE id = 'prj_2'`.execute(metadata.db);
    t.is(await store.find(c.id), null, "a project's tasks go with it");
  });

  test(`${engine}: ingest tasks: two claimers at once take every task once; a success and a cancel at once, one wins`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    await secondProject(metadata.db);
    const [one, two] = [new TaskStore(metadata), new TaskStore(metadata)];
    const tasks = Array.from({ length: 24 }, (_, i) => newTask(i % 2 ? 'prj_1' : 'prj_2'));
    await one.insert(tasks);
    const claimed: string[] = [];
    for (let round = 0; round < 20; round++) {
      const got = await Promise.all([one, two, one, two].map((s) => s.claimNext(null)));
      for (const x of got) if (x) claimed.push(x.id);
    }
    t.is(claimed.length, 24, 'every task claimed');
    t.is(new Set(claimed).size, 24, 'none twice');
    t.is(await one.count('running'), 24);

    const result: TaskResult = { nodes: [], warnings: [], project_version: null };
    for (const task of tasks.slice(0, 8)) {
      const [won, cancelled] = await Promise.all([one.succeed(task.id, result), two.transition(task.id, ['queued', 'running'], 'cancelled')]);
      t.true(won !== cancelled, 'exactly one of them');
      const now = await one.find(task.id);
      t.is(now!.status, won ? 'succeeded' : 'cancelled');
      t.is(now!.result === null, !won, 'succeeded always with its result');
    }
  });

  test(`${engine}: ingest rules: matched in creation order, seq breaking ties of the same millisecond; deleted`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new RuleStore(metadata);
    const made = await store.create({ project_id: 'prj_1', name: 'md', description: '', match: { extensions: ['txt'] }, target: 'markdown', json_schema: null, instructions: null, created_by: 'usr_1' });
    t.deepEqual(await store.find(made.id), made);
    for (const id of ['rul_z', 'rul_a', 'rul_m']) {
      await metadata.db
        .insertInto('ingest_rules')
        .values({ id, project_id: 'prj_1', name: id, description: '', match: '{}', target: 'json', json_schema: '{"type":"object"}', instructions: 'x', created_by: null, created_at: NOW, updated_at: NOW })
        .execute();
    }
    const listed = await store.listByProject('prj_1');
    t.deepEqual(listed.map((r) => r.id), ['rul_z', 'rul_a', 'rul_m', made.id]);
    t.deepEqual(listed[0]!.json_schema, { type: 'object' });
    t.deepEqual(listed[3]!.match, { extensions: ['txt'] });
    await store.delete('rul_a');
    t.is(await store.find('rul_a'), null);
    t.deepEqual((await store.listByProject('prj_1')).map((r) => r.id), ['rul_z', 'rul_m', made.id]);
  });

  test(`${engine}: tables' records: create, find, list by project and organization, partial update, one record per node, delete`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_2', 'Other', ${NOW}, ${NOW})`.execute(metadata.db);
    await sql`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_9', 'org_2', 'Elsewhere', ${NOW}, ${NOW})`.execute(metadata.db);
    const store = new TableStore(metadata);
    const base = { description: '', json_schema: null, path: 'tables/a.json', created_by: 'usr_1' };
    const a = await store.create({ ...base, project_id: 'prj_1', node_id: 'nod_a', name: 'A', json_schema: { type: 'array' } });
    const b = await store.create({ ...base, project_id: 'prj_1', node_id: 'nod_b', name: 'B' });
    await store.create({ ...base, project_id: 'prj_9', node_id: 'nod_c', name: 'C' });
    t.deepEqual(await store.find(a.id), a, 'the schema comes back as an object');
    const order = [a, b].sort((x, y) => x.created_at.localeCompare(y.created_at) || (x.id < y.id ? -1 : 1)).map((x) => x.name);
    t.deepEqual((await store.listByProject('prj_1')).map((x) => x.name), order);
    t.deepEqual((await store.listByOrg('org_1')).map((x) => x.name), order);
    t.deepEqual((await store.listByOrg('org_2')).map((x) => x.name), ['C']);
    const err = await store.create({ ...base, project_id: 'prj_1', node_id: 'nod_a', name: 'again' }).then(() => null, (e: unknown) => e);
    t.true(isUniqueViolation(err, 'node_id'), 'one record per node');

    const renamed = await store.update(a.id, { name: 'A2', description: undefined });
    t.like(renamed, { name: 'A2', description: '', json_schema: { type: 'array' } });
    t.like(await store.update(a.id, { json_schema: null }), { name: 'A2', json_schema: null });
    await store.delete(b.id);
    t.is(await store.find(b.id), null);
    t.is(await store.update(b.id, { name: 'gone' }), null, 'an update of a deleted record finds nothing');
  });

  test(`${engine}: upload grants: issue, claim once among concurrent PUTs, renew and release only one's own claim, finish; expired rows go`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const grants = new UploadGrants(metadata);
    const row: Omit<UploadGrantRow, 'claimed_at'> = {
      id: 'upl_1',
      project_id: 'prj_1',
      node_id: 'nod_1',
      parent_id: null,
      name: 'a.bin',
      path: 'a.bin',
      base_version: 0,
      size: 5_000_000_000,
      mime_type: null,
      principal_kind: 'user',
      principal_id: 'usr_1',
      created_at: NOW,
      expires_at: '2999-01-01T00:00:00.000Z',
    };
    await grants.issue({ ...row, id: 'upl_old', expires_at: '2000-01-01T00:00:00.000Z' });
    await grants.issue(row);
    t.is(await grants.find('upl_old'), null, 'an expired grant goes when another is issued');
    t.deepEqual(await grants.find('upl_1'), { ...row, claimed_at: null }, 'sizes past 32 bits come back as numbers');

    const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => grants.claim('upl_1', `2026-01-01T00:00:0${i}.000Z`)));
    const won = claims.filter((c) => c !== null);
    t.is(won.length, 1, 'one PUT holds the address');
    t.is((await grants.find('upl_1'))!.claimed_at, won[0]);
    t.is(await grants.renew('upl_1', 'not-the-claim'), null);
    t.false(await grants.release('upl_1', 'not-the-claim'), "another's claim is not released");
    const renewed = await grants.renew('upl_1', won[0]!, '2026-01-01T00:01:00.000Z');
    t.is(renewed, '2026-01-01T00:01:00.000Z');
    t.true(await grants.release('upl_1', renewed!));
    t.is(await grants.claim('upl_missing'), null);
    t.truthy(await grants.claim('upl_1'), 'released: claimable again');
    await grants.finish('upl_1');
    t.is(await grants.find('upl_1'), null);
  });

  test(`${engine}: ingest success crash window: the commit is made, recording success fails once; the next start finishes the task from its commit and writes nothing again`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const f = fixture();
    t.teardown(() => f.cleanup());
    await f.store.createProject('prj_1');
    const store = new TaskStore(metadata);
    const temp = new IngestTemp(f.dir);
    let conversions = 0;
    const converter = {
      convert: async () => {
        conversions++;
        return { nodes: [{ name: 'notes.md', type: 'markdown', content: '# converted once' }], warnings: ['a warning'] };
      },
    } as unknown as SourceConverter;
    const runner = new TaskRunner({
      content: f.store,
      status: async (id) => (await store.find(id))?.status ?? null,
      grants: { require: async () => ({}) as ContentGrant },
      converter,
      temp,
      url: { maxBytes: 1024, timeoutMs: 1000, allowPrivate: false },
    });
    // The metadata step after the commit fails once, as a crash there would leave it.
    let failures = 1;
    const flaky = Object.create(store) as TaskStore;
    flaky.succeed = async (id, result) => {
      if (failures-- > 0) throw new Error('the metadata store went away');
      return store.succeed(id, result);
    };
    const task = newTask();
    await store.insert([task]);
    const queue = new IngestQueue({ store: flaky, temp, workers: 1, execute: (x, run) => runner.execute(x, run), committed: (x) => runner.committed(x) });
    await queue.start();
    await until('the commit', async () => f.store.findByPath('prj_1', 'in/notes.md') !== null);
    await queue.close();
    const left = await store.find(task.id);
    t.is(left!.status, 'running', 'committed, but its success is not recorded');
    t.is(left!.result, null, 'never succeeded without a result');
    const node = f.store.getByPath('prj_1', 'in/notes.md');
    t.is(node.version, 1);
    const head = f.store.head('prj_1')!;
    t.deepEqual(await f.store.commitTrailers('prj_1', head.commitId), [taskTrailer(task.id)]);

    // The next start: the task is finished from its commit, not converted and written again.
    const again = new IngestQueue({ store, temp, workers: 1, execute: (x, run) => runner.execute(x, run), committed: (x) => runner.committed(x) });
    await again.start();
    await again.close();
    const done = await store.find(task.id);
    t.is(done!.status, 'succeeded');
    t.deepEqual(done!.result, {
      nodes: [{ path: 'in/notes.md', node_id: node.id, version: 1, type: 'markdown' }],
      warnings: [RECOVERED_WARNING],
      project_version: head.projectVersion,
    });
    t.is(conversions, 1, 'converted once');
    t.is(f.store.getByPath('prj_1', 'in/notes.md').version, 1, 'written once');
    t.is(f.store.head('prj_1')!.commitId, head.commitId, 'no other commit');

    // A task left running without a commit is queued again and runs.
    const other = newTask();
    await store.insert([other]);
    t.is((await store.claimNext(null))!.id, other.id);
    const third = new IngestQueue({ store, temp, workers: 1, execute: (x, run) => runner.execute(x, run), committed: (x) => runner.committed(x) });
    t.teardown(() => third.close());
    await third.start();
    await until('the requeued task', async () => (await store.find(other.id))?.status === 'succeeded');
    t.is(conversions, 2, 'run again from the beginning');
    t.deepEqual((await store.find(other.id))!.result!.warnings, ['a warning'], 'a task run to its end keeps its warnings');
  });

  test(`${engine}: table delete crash window: the node is trashed, removing the record fails once; reads treat the table as deleted and remove the record`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const f = fixture();
    t.teardown(() => f.cleanup());
    await f.store.createProject('prj_1');
    const store = new TableStore(metadata);
    let failures = 1;
    const flaky = Object.create(store) as TableStore;
    flaky.delete = async (id) => {
      if (failures-- > 0) throw new Error('the metadata store went away');
      return store.delete(id);
    };
    const allow = { grant: () => grant, requireNode: () => {}, requirePath: () => {}, mayNode: () => true, mayPath: () => true } as unknown as ContentAccess;
    const grant = { principal: { kind: 'user', id: 'usr_1' }, projectId: 'prj_1', role: 'owner', scope: '', action: 'content:write', actor: alice } as unknown as ContentGrant;
    const tables = new Tables({ store: flaky, content: f.store, access: allow, authorizer: { requireOrg: () => {} } as never, projects: { find: () => ({ org_id: 'org_1' }) as never } });

    const doomed = await tables.create(grant, { name: 'Doomed', data: [1] });
    const kept = await tables.create(grant, { name: 'Kept', data: { a: 1 } });
    const { trashed } = await tables.delete(grant, doomed.table.id);
    t.is(trashed!.state, 'trashed', 'the node went to the trash');
    t.truthy(await store.find(doomed.table.id), 'the record was left behind');
    const trashCommit = f.store.getVersion('prj_1', { id: trashed!.id }, trashed!.version).commitId;
    t.deepEqual(await f.store.commitTrailers('prj_1', trashCommit), [tableDeleteTrailer(doomed.table.id)]);

    t.deepEqual((await tables.listForProject(grant.principal, 'prj_1')).map((v) => v.table.name), ['Kept'], 'a list does not show it');
    t.is(await store.find(doomed.table.id), null, 'and removed the record');
    t.is(await tables.find(doomed.table.id), null);

    // A table whose node was trashed otherwise (the content API) is still a table: restore it to use it.
    await f.store.remove('prj_1', alice, kept.node!.path);
    t.deepEqual((await tables.listForProject(grant.principal, 'prj_1')).map((v) => v.table.name), ['Kept']);
    const read = await t.throwsAsync(tables.read(grant, kept.table.id, ''));
    t.is((read as { code?: string }).code, 'CONFLICT', 'in the trash: 409, as before');
    t.truthy(await store.find(kept.table.id));
  });
}
