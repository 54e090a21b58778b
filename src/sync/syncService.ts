import type { ContentStore } from '../content/contentStore.ts';
import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import type { AccessConnectionStore, IssuedConnection } from '../domain/connections/accessConnectionStore.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { Changelog } from '../events/changelog.ts';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../auth/secretBox.ts';
import { checkConfigFields } from '../platform/connectors/configFields.ts';
import { connectors, type ConnectorSpec } from '../platform/connectors/spec.ts';
import { syncFolder } from '../platform/runtime/itemPaths.ts';
import type { RunHandle, SyncRuntime } from '../platform/runtime/syncRuntime.ts';
import { currentEntries, pullSet, type PullEntry } from './pullSet.ts';
import { mutationsFor, storedContent, type PushOp } from './pushOps.ts';
import type { SyncRunRecord, SyncStateRecord } from './syncRecords.ts';
import type { SyncStore } from './syncStore.ts';
import { fetchUrl } from './urlFetch.ts';
import { redactUrl, redactUrlsIn } from '../logging/redact.ts';

export interface Sync {
  state: SyncStateRecord;
  connection: ConnectionRecord;
}

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

/** The rules of data sync between the HTTP routes and the stores. */
export class SyncService {
  private readonly pulls = new Map<string, PullEntry[]>();

  constructor(
    private readonly deps: {
      store: SyncStore;
      connections: AccessConnectionStore;
      content: ContentStore;
      changelog: Changelog;
      maxContentBytes: number;
      /** Let `url` syncs fetch loopback and private addresses (off by default). */
      urlFetchAllowPrivate?: boolean;
      /** Runs the platform connectors (github, notion…) and schedules them. */
      runtime: SyncRuntime;
      /** Seals webhook secrets at rest. */
      webhookBox: SecretBox;
      /** Shortest interval of an interval sync (CNS_SYNC_MIN_INTERVAL_S). */
      minIntervalS: () => number;
    },
  ) {}

  /** Every connector a sync may use: `folder`, `url` and the platform connectors. */
  specs(): ConnectorSpec[] {
    return [...connectors, ...this.deps.runtime.connectors.map((c) => c.spec)];
  }

  private specFor(provider: string): ConnectorSpec | undefined {
    return this.specs().find((c) => c.provider === provider);
  }

  /** Whether the sync is run by the platform runtime (rather than a client or a url fetch). */
  isPlatform(sync: Sync): boolean {
    return this.deps.runtime.connector(sync.state.provider) !== undefined;
  }

  /** Creates the `sync` connection (its key returned once) and its state. */
  bootstrap(input: { projectId: string; provider: string; name?: string; config: Record<string, unknown>; createdBy: string | null }): {
    sync: Sync;
    key: string;
  } {
    const spec = this.specFor(input.provider);
    if (!spec) throw invalidField('provider', `unknown provider "${input.provider}"; see GET /sync/connectors`);
    const platform = this.deps.runtime.connector(spec.provider);
    if (platform) return this.bootstrapPlatform(input, spec, platform.validateConfig);
    for (const f of spec.config_fields) {
      const v = input.config[f.name];
      if (f.required && (v === undefined || v === '')) throw invalidField(`config.${f.name}`, 'is required');
      if (v !== undefined && typeof v !== 'string') throw invalidField(`config.${f.name}`, 'must be a string');
    }
    if (spec.provider === 'url') {
      try {
        const u = new URL(String(input.config.url));
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        throw invalidField('config.url', 'must be an http or https address');
      }
    }
    const scope = spec.provider === 'folder' ? (input.config.path as string | undefined) : undefined;
    const issued: IssuedConnection = this.deps.connections.createConnection({
      projectId: input.projectId,
      kind: 'sync',
      name: input.name ?? defaultName(spec.provider, input.config),
      scopePath: scope,
      mode: 'read_write',
      createdBy: input.createdBy,
      config: { provider: spec.provider, ...input.config },
    });
    const state = this.deps.store.create({
      syncId: issued.connection.id,
      projectId: input.projectId,
      provider: spec.provider,
      triggerMode: spec.default_sync_mode,
    });
    return { sync: { state, connection: issued.connection }, key: issued.key };
  }

  /** A platform sync: its config checked by its connector; its key's scope is the folder it fills. */
  private bootstrapPlatform(
    input: { projectId: string; provider: string; name?: string; config: Record<string, unknown>; createdBy: string | null },
    spec: ConnectorSpec,
    validate: ((config: Record<string, unknown>) => void) | undefined,
  ): { sync: Sync; key: string } {
    checkConfigFields(spec, input.config);
    validate?.(input.config);
    const folder = syncFolder(input.config, spec.provider);
    const issued = this.deps.connections.createConnection({
      projectId: input.projectId,
      kind: 'sync',
      name: (input.name ?? `${spec.display_name} /${folder}`).slice(0, 200),
      scopePath: folder === '' ? undefined : folder,
      mode: 'read_write',
      createdBy: input.createdBy,
      config: { provider: spec.provider, ...input.config },
    });
    const state = this.deps.store.create({ syncId: issued.connection.id, projectId: input.projectId, provider: spec.provider, triggerMode: spec.default_sync_mode });
    return { sync: { state, connection: issued.connection }, key: issued.key };
  }

  get(syncId: string): Sync {
    const state = this.deps.store.require(syncId);
    const connection = this.deps.connections.find(syncId);
    if (!connection) throw new DomainError('NOT_FOUND', 'Sync not found.');
    return { state, connection };
  }

  list(projectId: string): Sync[] {
    return this.deps.store
      .listByProject(projectId)
      .map((state) => ({ state, connection: this.deps.connections.find(state.sync_id) }))
      .filter((s): s is Sync => s.connection !== undefined);
  }

  /**
   * Sets the trigger: `manual`, `interval` (with `interval_s`, scheduled in SQLite), `webhook`
   * (a new secret, answered once as `webhookSecret`) or a client mode (`watch`). `interval_s`
   * with another mode is refused rather than ignored.
   */
  setTrigger(sync: Sync, input: { mode: string; intervalS?: number; field: string }): { state: SyncStateRecord; webhookSecret: string | null } {
    const spec = this.specFor(sync.state.provider);
    if (!spec?.sync_modes.includes(input.mode)) throw invalidField(input.field, `must be one of: ${spec?.sync_modes.join(', ') ?? 'none'}`);
    if (input.mode !== 'interval' && input.intervalS !== undefined) throw invalidField('interval_s', 'is only for mode interval');
    if (!this.isPlatform(sync)) return { state: this.deps.store.setTriggerMode(sync.state.sync_id, input.mode), webhookSecret: null };
    if (input.mode === 'interval') {
      const min = this.deps.minIntervalS();
      if (input.intervalS === undefined) throw invalidField('interval_s', 'is required with mode interval');
      if (input.intervalS < min) throw invalidField('interval_s', `must be at least ${min} seconds`);
    }
    let secret: string | null = null;
    let sealed: string | null = null;
    if (input.mode === 'webhook') {
      secret = randomBytes(24).toString('base64url');
      sealed = this.deps.webhookBox.seal(secret, sync.state.sync_id);
    }
    const state = this.deps.runtime.schedule(sync.state.sync_id, input.mode, input.intervalS ?? null, sealed);
    return { state, webhookSecret: secret };
  }

  /** Pauses or resumes; pausing stops a run going on (recorded as interrupted). */
  async setPaused(sync: Sync, paused: boolean): Promise<SyncStateRecord> {
    return this.deps.runtime.setPaused(sync.state.sync_id, paused);
  }

  /** A run of a platform sync now, or the one already queued or running. */
  runPlatform(sync: Sync, trigger: 'manual' | 'webhook'): RunHandle {
    this.assertActive(sync);
    return this.deps.runtime.runNow(sync.state.sync_id, trigger);
  }

  /**
   * A webhook delivery: the body must be signed with the sync's secret (HMAC-SHA256 in
   * `X-Hub-Signature-256: sha256=<hex>`, GitHub's form); then a run starts (or the one going on
   * is answered).
   */
  webhook(syncId: string, body: Buffer, signature: string | undefined): RunHandle {
    const state = this.deps.store.find(syncId);
    if (!state || !state.webhook_secret || state.trigger_mode !== 'webhook') throw new DomainError('NOT_FOUND', 'No webhook here.');
    const secret = this.deps.webhookBox.open(state.webhook_secret, syncId);
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    const given = Buffer.from(signature ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new DomainError('UNAUTHORIZED', 'The webhook signature (X-Hub-Signature-256) does not match this sync\'s secret.');
    }
    return this.runPlatform(this.get(syncId), 'webhook');
  }

  /** Deleting a sync stops its run and deletes its connection: its key stops working at once. Content stays. */
  async delete(sync: Sync): Promise<void> {
    await this.deps.runtime.forget(sync.state.sync_id);
    this.deps.store.delete(sync.state.sync_id);
    this.deps.connections.delete(sync.state.sync_id);
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
    this.assertActive(sync);
    const { content, changelog, store } = this.deps;
    const projectId = sync.state.project_id;
    const until = q.until ?? changelog.latest(projectId);
    if (q.ids) {
      if (!q.runId) throw invalidField('run_id', 'is required with ids');
      const run = store.openRun(sync.state.sync_id, q.runId);
      const entries = currentEntries(content, projectId, sync.connection.scope_path, q.ids.slice(0, q.limit));
      return { runId: run.id, cursor: until, entries: await this.withBodies(projectId, entries), hasMore: false, nextAfter: null };
    }
    const run = q.runId ? store.openRun(sync.state.sync_id, q.runId) : store.startRun(sync.state, 'client', q.cursor);
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
    this.assertActive(sync);
    const { content, store } = this.deps;
    const projectId = sync.state.project_id;
    const run = options.runId ? store.openRun(sync.state.sync_id, options.runId) : null;
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
    if (run) store.countUp(run.id, ops.length);
    const files = ops.map((op) => {
      if (op.action === 'delete') return { action: op.action, path: op.path, deleted: true };
      const n = content.findByPath(projectId, op.path);
      return { action: op.action, path: op.path, node_id: n?.id ?? null, node_type: n?.type ?? null, version: n?.version ?? null, content_hash: n?.contentHash ?? null };
    });
    return { projectVersion, changed, files };
  }

  /** The client applied everything up to `cursor`; closes the run when one is named. */
  ack(sync: Sync, input: { cursor: number; runId?: string; filesDown?: number; conflicts?: string[]; errors?: string[] }): { state: SyncStateRecord; run: SyncRunRecord | null } {
    const { store, changelog } = this.deps;
    // A cursor names a commit the client pulled: one beyond the project's last commit is a client bug.
    const latest = changelog.latest(sync.state.project_id);
    if (input.cursor > latest) throw invalidField('cursor', `is beyond the project's last commit (${latest})`);
    const state = store.ack(sync.state.sync_id, input.cursor);
    let run: SyncRunRecord | null = null;
    if (input.runId) {
      store.openRun(sync.state.sync_id, input.runId);
      run = store.finishRun(input.runId, { filesDown: input.filesDown, conflicts: input.conflicts, errors: input.errors, cursorTo: input.cursor });
    }
    return { state, run };
  }

  /**
   * A manual refresh. A `url` sync fetches its address now and writes it (one recorded run); a
   * folder sync runs on its client machine, which the server cannot reach. A failed fetch or
   * write is recorded as a failed run and then thrown as a RefreshFailed carrying that run.
   */
  async refresh(sync: Sync): Promise<SyncRunRecord> {
    this.assertActive(sync);
    if (sync.state.provider !== 'url') {
      throw new DomainError('CONFLICT', 'A folder sync runs on its client: run `cns sync DIR` (or keep `cns sync DIR --watch` running).', {
        reason: 'client_driven',
      });
    }
    const { store, content } = this.deps;
    const config = JSON.parse(sync.connection.config) as { url: string; path: string };
    const run = store.startRun(sync.state, 'manual', null);
    try {
      const { bytes } = await fetchUrl(config.url, { maxBytes: this.deps.maxContentBytes, allowPrivate: this.deps.urlFetchAllowPrivate });
      const { type, content: value } = storedContent(config.path, bytes);
      await content.write(sync.state.project_id, actorOfSync(sync.connection), { path: config.path, type, content: value, message: redactUrlsIn(`sync ${sync.connection.name}: fetch ${redactUrl(config.url)}`) });
      store.countUp(run.id, 1);
      return store.finishRun(run.id, { cursorTo: this.deps.changelog.latest(sync.state.project_id) });
    } catch (err) {
      throw new RefreshFailed(store.finishRun(run.id, { errors: [(err as Error).message] }), err);
    }
  }

  private assertActive(sync: Sync): void {
    if (sync.state.status === 'paused') throw new DomainError('CONFLICT', 'This sync is paused; resume it first.', { reason: 'paused' });
  }
}

/** A refresh that failed: its run is recorded (status `failed`); `cause` is why. */
export class RefreshFailed extends Error {
  constructor(
    readonly run: SyncRunRecord,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'RefreshFailed';
  }
}

/** Versions written by a sync carry actor type `sync` and the connection as actor. */
export function actorOfSync(c: ConnectionRecord): { type: 'sync'; id: string; author: string } {
  // Names made from a url sync's address (older ones kept it whole) must not record its secrets.
  return { type: 'sync', id: c.id, author: redactUrlsIn(`agent:${c.name}`) };
}

function defaultName(provider: string, config: Record<string, unknown>): string {
  if (provider === 'url') return `url ${redactUrl(String(config.url))}`.slice(0, 200);
  const where = [config.host, config.folder].filter((v) => typeof v === 'string' && v !== '').join(':');
  return (where ? `folder ${where}` : 'folder').slice(0, 200);
}

function describe(ops: PushOp[]): string {
  if (ops.length === 1) {
    const op = ops[0]!;
    return op.action === 'move' ? `move ${op.from} to ${op.path}` : `${op.action} ${op.path}`;
  }
  return `${ops.length} changes`;
}
