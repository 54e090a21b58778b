import type { ContentStore } from '../content/contentStore.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import { invalidField } from '../errors/domainError.ts';
import type { Changelog } from '../events/changelog.ts';
import { checkStringFields, type ConnectorSpec } from './connectorSpec.ts';
import { currentEntries, pullSet, type PullEntry } from './pullSet.ts';
import { mutationsFor, type PushOp } from './pushOps.ts';
import type { Sync, SyncRunRecord, SyncStateRecord } from './syncRecords.ts';
import { actorOfSync, assertActive, stateFor } from './syncs.ts';
import type { SyncStore } from './syncStore.ts';

/** The folder sync of `cns sync DIR`: the client pushes and pulls, the server keeps the cursor. */
export const folderConnector: ConnectorSpec = {
  provider: 'folder',
  display_name: 'Local folder',
  description: 'Two-way sync of a folder on your machine with `cns sync DIR` (push-file, pull-files, ack-pull).',
  auth: { type: 'none', description: 'The command line holds the sync connection\'s own access key, kept in DIR/.cns/.' },
  sync_modes: ['manual', 'watch'],
  default_sync_mode: 'manual',
  directions: ['pull', 'push'],
  config_fields: [
    { name: 'path', type: 'path', required: false, description: 'Subtree of the project the folder mirrors (the whole project when empty).' },
    { name: 'folder', type: 'string', required: false, description: 'Accepted from older clients and not kept: a local path never reaches the sync\'s name, config or history.' },
    { name: 'host', type: 'string', required: false, description: 'Name of the client machine: the sync is named `folder <host>` unless given a name.' },
  ],
};

export interface PullPage {
  runId: string;
  cursor: number;
  entries: { entry: PullEntry; content: Buffer | null }[];
  hasMore: boolean;
  nextAfter: string | null;
}

export interface PushResult {
  projectVersion: number | null;
  changed: boolean;
  files: Record<string, unknown>[];
}

/** Bytes of content one pull page carries at most (one file always fits, however large). */
const PAGE_BYTES = 8 * 1024 * 1024;
/** Pull sets kept between the pages of a pull (one per open run), so a page costs its own files only. */
const CACHED_PULLS = 8;

/**
 * The folder-sync protocol between `cns sync` and the stores: a sync's creation, then pull
 * pages of what changed since the client's cursor, pushes applied as one commit by the sync,
 * and acks that move the cursor and close the client's run.
 */
export class FolderSyncService {
  private readonly pulls = new Map<string, PullEntry[]>();

  constructor(
    private readonly deps: {
      store: SyncStore;
      connections: Pick<AccessConnectionStore, 'createConnection' | 'delete'>;
      content: ContentStore;
      changelog: Changelog;
    },
  ) {}

  /**
   * Creates a folder sync: its `sync` connection (the key returned once) scoped to `config.path`,
   * and its state. Its name (the author of its versions, `agent:<name>`) is the one given, else
   * `folder <host>`; the client's local path is never kept (`config.folder` of older clients).
   */
  async create(input: { projectId: string; name?: string; config: Record<string, unknown>; createdBy: string | null }): Promise<{ sync: Sync; key: string }> {
    checkStringFields(folderConnector, input.config);
    const { folder: _localPath, ...config } = input.config;
    const issued = await this.deps.connections.createConnection({
      projectId: input.projectId,
      kind: 'sync',
      name: input.name ?? defaultName(config),
      scopePath: config.path as string | undefined,
      mode: 'read_write',
      createdBy: input.createdBy,
      config: { provider: folderConnector.provider, ...config },
    });
    const state = await stateFor(this.deps, {
      syncId: issued.connection.id,
      projectId: input.projectId,
      provider: folderConnector.provider,
      triggerMode: folderConnector.default_sync_mode,
    });
    return { sync: { state, connection: issued.connection }, key: issued.key };
  }

  /**
   * One page of the files changed since `cursor`; the first page (no run id) opens a run. With
   * `withContent: false` the page only lists (up to `limit` entries, no byte budget); `ids` then
   * fetches the current state and content of the listed files the client needs.
   */
  async pull(
    sync: Sync,
    q: { cursor: number; until?: number; after?: string; limit: number; runId?: string; withContent?: boolean; ids?: string[] },
  ): Promise<PullPage> {
    assertActive(sync);
    const { content, changelog, store } = this.deps;
    const projectId = sync.state.project_id;
    const until = q.until ?? changelog.latest(projectId);
    if (q.ids) {
      if (!q.runId) throw invalidField('run_id', 'is required with ids');
      const run = await store.openRun(sync.state.sync_id, q.runId);
      const entries = currentEntries(content, projectId, sync.connection.scope_path, q.ids.slice(0, q.limit));
      return { runId: run.id, cursor: until, entries: await this.withBodies(projectId, entries), hasMore: false, nextAfter: null };
    }
    const run = q.runId ? await store.openRun(sync.state.sync_id, q.runId) : await store.startRun(sync.state, 'client', q.cursor);
    const all = this.pullSetOf(run.id, () => pullSet(content, changelog, projectId, sync.connection.scope_path, q.cursor, until), `${q.cursor}:${until}`);
    const start = q.after ? all.findIndex((e) => e.nodeId > q.after!) : 0;
    const rest = start < 0 ? [] : all.slice(start);
    if (q.withContent === false) {
      const page = rest.slice(0, q.limit);
      const hasMore = page.length < rest.length;
      return { runId: run.id, cursor: until, entries: page.map((entry) => ({ entry, content: null })), hasMore, nextAfter: hasMore ? page[page.length - 1]!.nodeId : null };
    }
    const entries: PullPage['entries'] = [];
    let bytes = 0;
    let i = 0;
    for (; i < rest.length; i++) {
      const entry = rest[i]!;
      if (entries.length >= q.limit || (entries.length > 0 && bytes + entry.size > PAGE_BYTES)) break;
      const [withBody] = await this.withBodies(projectId, [entry]);
      if (!withBody) continue; // gone since the listing: the next pull reports it
      bytes += withBody.content?.length ?? 0;
      entries.push(withBody);
    }
    const hasMore = i < rest.length;
    return { runId: run.id, cursor: until, entries, hasMore, nextAfter: hasMore ? rest[i - 1]!.nodeId : null };
  }

  /** Reads the content of upserts; an upsert whose node vanished meanwhile is left out. */
  private async withBodies(projectId: string, entries: PullEntry[]): Promise<PullPage['entries']> {
    const out: PullPage['entries'] = [];
    for (const entry of entries) {
      if (entry.action !== 'upsert') {
        out.push({ entry, content: null });
        continue;
      }
      try {
        out.push({ entry, content: (await this.deps.content.readContent(projectId, { id: entry.nodeId })).bytes });
      } catch {
        /* gone since the listing */
      }
    }
    return out;
  }

  private pullSetOf(runId: string, compute: () => PullEntry[], window: string): PullEntry[] {
    const key = `${runId}:${window}`;
    const hit = this.pulls.get(key);
    if (hit) return hit;
    const entries = compute();
    this.pulls.set(key, entries);
    while (this.pulls.size > CACHED_PULLS) this.pulls.delete(this.pulls.keys().next().value!);
    return entries;
  }

  /** Applies pushed changes as one commit with the sync's actor. */
  async push(sync: Sync, ops: PushOp[], options: { runId?: string; message?: string }): Promise<PushResult> {
    assertActive(sync);
    const { content, store } = this.deps;
    const projectId = sync.state.project_id;
    const run = options.runId ? await store.openRun(sync.state.sync_id, options.runId) : null;
    const mutations = mutationsFor(content, projectId, ops);
    let projectVersion: number | null = null;
    let changed = false;
    if (mutations.length > 0) {
      const r = await content.commit(projectId, actorOfSync(sync.connection), mutations, {
        message: options.message ?? `sync ${sync.connection.name}: ${describe(ops)}`,
      });
      projectVersion = r.projectVersion;
      changed = r.changed;
    }
    if (run) await store.countUp(run.id, ops.length);
    const files = ops.map((op) => {
      if (op.action === 'delete') return { action: op.action, path: op.path, deleted: true };
      const n = content.findByPath(projectId, op.path);
      return { action: op.action, path: op.path, node_id: n?.id ?? null, node_type: n?.type ?? null, version: n?.version ?? null, content_hash: n?.contentHash ?? null };
    });
    return { projectVersion, changed, files };
  }

  /** The client applied everything up to `cursor`; closes the run when one is named. */
  async ack(sync: Sync, input: { cursor: number; runId?: string; filesDown?: number; conflicts?: string[]; errors?: string[] }): Promise<{ state: SyncStateRecord; run: SyncRunRecord | null }> {
    const { store, changelog } = this.deps;
    // A cursor names a commit the client pulled: one beyond the project's last commit is a client bug.
    const latest = changelog.latest(sync.state.project_id);
    if (input.cursor > latest) throw invalidField('cursor', `is beyond the project's last commit (${latest})`);
    const state = await store.ack(sync.state.sync_id, input.cursor);
    let run: SyncRunRecord | null = null;
    if (input.runId) {
      await store.openRun(sync.state.sync_id, input.runId);
      run = await store.finishRun(input.runId, { filesDown: input.filesDown, conflicts: input.conflicts, errors: input.errors, cursorTo: input.cursor });
    }
    return { state, run };
  }
}

/** `folder <host>`: the machine, never the folder's path on it. */
function defaultName(config: Record<string, unknown>): string {
  return (typeof config.host === 'string' && config.host !== '' ? `folder ${config.host}` : 'folder').slice(0, 200);
}

function describe(ops: PushOp[]): string {
  if (ops.length === 1) {
    const op = ops[0]!;
    return op.action === 'move' ? `move ${op.from} to ${op.path}` : `${op.action} ${op.path}`;
  }
  return `${ops.length} changes`;
}
