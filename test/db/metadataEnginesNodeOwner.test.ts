import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { ExecutionStore } from '../../src/agents/executions/executionStore.ts';
import type { MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { IngestQueue } from '../../src/ingest/queue/ingestQueue.ts';
import { TaskStore, type NewTask } from '../../src/ingest/queue/taskStore.ts';
import { IngestTemp } from '../../src/ingest/queue/tempFiles.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { PlatformRunStore } from '../../src/platform/runtime/platformRunStore.ts';
import { SyncRuntime } from '../../src/platform/runtime/syncRuntime.ts';
import { SyncStore } from '../../src/sync/syncStore.ts';
import { alice } from '../content/helpers.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

/**
 * A cluster's nodes share one metadata store (issue 31, migration 032): a sync run, an agent
 * execution and an ingest task record the node that queued, started or claimed it, and a node's
 * start-up recovery touches only its own rows and those with no node (from before the cluster),
 * never another node's, which may be going on. Without a node id (a single box) recovery takes
 * every row, as before.
 */

const NOW = '2026-01-01T00:00:00.000Z';

/** The cluster_node column of each row, by id. */
async function nodesOf(metadata: MetadataStore, table: 'sync_runs' | 'agent_executions' | 'ingest_tasks', ids: string[]): Promise<(string | null)[]> {
  const rows = await metadata.db.selectFrom(table).select(['id', 'cluster_node']).execute();
  const byId = new Map(rows.map((r) => [r.id, r.cluster_node]));
  return ids.map((id) => {
    const node = byId.get(id);
    return node === undefined ? 'missing' : node;
  });
}

/** The platform runtime of a process that is node `nodeId` (null: a single box); only its start-up is exercised. */
function runtimeOf(metadata: MetadataStore, store: SyncStore, nodeId: string | null): SyncRuntime {
  return new SyncRuntime({
    metadata,
    store,
    nodeId,
    logger: createLogger('silent'),
    connectors: [],
    settings: () => ({ sync: { maxConcurrentRuns: 2, apiBase: {} }, urlFetchAllowPrivate: false, maxContentBytes: 1 << 20 }),
    // Not reached: no run is made here.
    connections: null as never,
    content: null as never,
    changelog: null as never,
    credentials: null as never,
    grants: null as never,
    convert: null as never,
  });
}

let taskNumber = 0;
const newTask = (): NewTask => ({
  id: `ing_${String(++taskNumber).padStart(4, '0')}`,
  project_id: 'prj_1',
  source: 'notes.txt',
  kind: 'file',
  target_path: 'in',
  mode: null,
  keep_original: false,
  rule_id: null,
  input: { file: 'source', size: 1, mime_type: 'text/plain' },
  created_by: 'usr_1',
  actor: alice,
  created_at: NOW,
});

for (const engine of ENGINES) {
  test(`${engine}: sync runs record the node that queued or started them; a node's start interrupts its own and node-less runs, not another node's; a single box's, all`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const store = new SyncStore(metadata);
    const sync = async (syncId: string) => {
      await sql`INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at)
                VALUES (${syncId}, 'prj_1', 'sync', ${syncId}, 'read_write', ${`hash-${syncId}`}, 'cns_', ${NOW}, ${NOW})`.execute(metadata.db);
      return store.create({ syncId, projectId: 'prj_1', provider: 'github', triggerMode: 'manual' });
    };
    // One sync per opened run: opening a run interrupts the sync's open one.
    const [a, url1, url2, folder] = [await sync('syn_a'), await sync('syn_url1'), await sync('syn_url2'), await sync('syn_folder')];
    const [on1, on2, alone] = [new PlatformRunStore(metadata, store, 'n1'), new PlatformRunStore(metadata, store, 'n2'), new PlatformRunStore(metadata, store)];

    const queued1 = await on1.queueRun(a, 'manual');
    t.is(queued1.cluster_node, 'n1', 'a queued run is the node that queued it');
    const running1 = await on1.queueRun(a, 'interval');
    t.like(await on1.beginRun(running1.id, null, 0), { status: 'running', cluster_node: 'n1' });
    const queued2 = await on2.queueRun(a, 'webhook');
    const running2 = await on2.queueRun(a, 'manual');
    await on2.beginRun(running2.id, null, 0);
    const legacy = await alone.queueRun(a, 'manual');
    // A url sync's fetch opens its run running, on the node that fetches.
    const urlRun1 = await store.startRun(url1, 'manual', null, 'n1');
    const urlRun2 = await store.startRun(url2, 'interval', null, 'n2');
    const client = await store.startRun(folder, 'client', 0);
    const all = [queued1, running1, queued2, running2, legacy, urlRun1, urlRun2, client].map((r) => r.id);
    t.deepEqual(await nodesOf(metadata, 'sync_runs', all), ['n1', 'n1', 'n2', 'n2', null, 'n1', 'n2', null]);
    const statuses = async () => Promise.all(all.map(async (id) => (await store.findRun(id))!.status));

    const node1 = runtimeOf(metadata, store, 'n1');
    await node1.start();
    await node1.stop();
    t.deepEqual(
      await statuses(),
      ['interrupted', 'interrupted', 'queued', 'running', 'interrupted', 'interrupted', 'running', 'running'],
      "node n1's runs and the node-less one interrupted; n2's left going on; a client's run is its client's",
    );
    t.like(await store.findRun(running2.id), { finished_at: null, errors: '[]' }, "n2's run untouched");

    const box = runtimeOf(metadata, store, null);
    await box.start();
    await box.stop();
    t.deepEqual(await statuses(), ['interrupted', 'interrupted', 'interrupted', 'interrupted', 'interrupted', 'interrupted', 'interrupted', 'running'], "a single box's start: every node's runs");
  });

  test(`${engine}: agent executions record the node that started them; a node's start fails its own and node-less turns, not another node's; a single box's, all`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    await sql`INSERT INTO connections (id, project_id, kind, name, mode, key_hash, key_prefix, created_at, updated_at)
              VALUES ('agt_1', 'prj_1', 'agent', 'agt_1', 'read_write', 'hash-agt_1', 'cns_', ${NOW}, ${NOW})`.execute(metadata.db);
    const [on1, on2, alone] = [new ExecutionStore(metadata, 'n1'), new ExecutionStore(metadata, 'n2'), new ExecutionStore(metadata)];
    const turn = (s: ExecutionStore) => s.start({ agentId: 'agt_1', sessionId: null, model: 'openai:gpt' });
    const ids = [await turn(on1), await turn(on2), await turn(alone), await turn(on2)];
    t.deepEqual(await nodesOf(metadata, 'agent_executions', ids), ['n1', 'n2', null, 'n2'], 'each turn names the node that started it');
    t.false('cluster_node' in (await on1.find(ids[0]!))!, 'cluster_node stays inside the store');
    const statuses = async () => Promise.all(ids.map(async (id) => (await on1.find(id))!.status));

    t.is(await on1.failInterrupted(), 2);
    t.deepEqual(await statuses(), ['failed', 'running', 'failed', 'running'], "n1's and the node-less turn failed; n2's go on");
    t.like(await on1.find(ids[1]!), { finished_at: null, error: null });
    t.true(await on2.finish(ids[3]!, { status: 'succeeded', inputTokens: 1, outputTokens: 1, toolCalls: [], versionsWritten: [] }), "n2's turn still finishes as it would");

    t.is(await alone.failInterrupted(), 1, "a single box's start: every running turn, whichever node");
    t.deepEqual(await statuses(), ['failed', 'failed', 'failed', 'succeeded']);
  });

  test(`${engine}: ingest tasks record the node that claimed them; a node's start requeues its own and node-less tasks, not another node's; a single box's, all`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const dir = mkdtempSync(join(tmpdir(), 'cns-ingest-node-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const temp = new IngestTemp(dir);
    const [on1, on2, alone] = [new TaskStore(metadata, 'n1'), new TaskStore(metadata, 'n2'), new TaskStore(metadata)];
    const tasks = [newTask(), newTask(), newTask(), newTask()];
    await on1.insert(tasks);
    const ids = tasks.map((x) => x.id);
    // Claimed in submission order: the first by n1, the second by n2, the third by a process with no node; the fourth stays queued.
    t.is((await on1.claimNext(null))!.id, ids[0]);
    t.is((await on2.claimNext(null))!.id, ids[1]);
    t.is((await alone.claimNext(null))!.id, ids[2]);
    t.deepEqual(await nodesOf(metadata, 'ingest_tasks', ids), ['n1', 'n2', null, null], 'each claim names the node that made it');
    t.false('cluster_node' in (await on1.find(ids[0]!))!, 'cluster_node stays inside the store');
    const statuses = async () => Promise.all(ids.map(async (id) => (await on1.find(id))!.status));

    // Start-up of node n1 (no workers: only its recovery runs).
    const node1 = new IngestQueue({ store: on1, temp, workers: 0, execute: () => Promise.reject(new Error('not run here')) });
    await node1.start();
    await node1.close();
    t.deepEqual(await statuses(), ['queued', 'running', 'queued', 'queued'], "n1's and the node-less task queued again; n2's goes on");
    t.truthy((await on1.find(ids[1]!))!.started_at, "n2's task untouched");

    const box = new IngestQueue({ store: alone, temp, workers: 0, execute: () => Promise.reject(new Error('not run here')) });
    await box.start();
    await box.close();
    t.deepEqual(await statuses(), ['queued', 'queued', 'queued', 'queued'], "a single box's start: every running task, whichever node");
  });
}
