import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../auth/secretBox.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { ConnectorSpec } from '../sync/connectorSpec.ts';
import type { FolderSyncService } from '../sync/folderSync.ts';
import type { Sync, SyncRunRecord, SyncStateRecord } from '../sync/syncRecords.ts';
import { assertActive, stateFor } from '../sync/syncs.ts';
import type { SyncStore } from '../sync/syncStore.ts';
import { checkConfigFields } from './connectors/configFields.ts';
import { connectors } from './connectors/spec.ts';
import { syncFolder } from './runtime/itemPaths.ts';
import type { RunHandle, SyncRuntime } from './runtime/syncRuntime.ts';
import { WebhookDeliveries } from './runtime/webhookDeliveries.ts';
import { RefreshFailed, type UrlSyncs } from './url/urlSync.ts';

/**
 * Syncs of every kind as the `/sync` routes manage them: the connectors they may use, creating
 * one of any provider (a folder sync through src/sync/, a url sync, a platform sync checked by
 * its connector), triggers, pausing, runs of platform syncs and their webhooks, url refreshes,
 * deletion. The folder-sync protocol itself (pull, push, ack) is src/sync/folderSync.ts.
 */
export class SyncService {
  constructor(
    private readonly deps: {
      store: SyncStore;
      connections: AccessConnectionStore;
      /** Creates folder syncs (the protocol of `cns sync`). */
      folders: Pick<FolderSyncService, 'create'>;
      /** Creates and refreshes url syncs. */
      urls: Pick<UrlSyncs, 'create' | 'refresh'>;
      /** Runs the platform connectors (github, notion…) and schedules them. */
      runtime: SyncRuntime;
      /** Seals webhook secrets at rest. */
      webhookBox: SecretBox;
      /** The deliveries each webhook sync accepted (a replay starts no run). */
      deliveries: WebhookDeliveries;
      /** Shortest interval of an interval sync (CNS_SYNC_MIN_INTERVAL_S). */
      minIntervalS: () => number;
    },
  ) {
    // Url syncs on an interval: the runtime's scheduler starts their refreshes.
    deps.runtime.scheduleElsewhere('url', async (syncId) =>
      deps.urls.refresh(await this.get(syncId), 'interval').catch((err: unknown) => {
        if (err instanceof RefreshFailed) return err.run; // recorded as a failed run
        throw err;
      }),
    );
  }

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
  async bootstrap(input: { projectId: string; provider: string; name?: string; config: Record<string, unknown>; createdBy: string | null }): Promise<{
    sync: Sync;
    key: string;
  }> {
    const spec = this.specFor(input.provider);
    if (!spec) throw invalidField('provider', `unknown provider "${input.provider}"; see GET /sync/connectors`);
    const platform = this.deps.runtime.connector(spec.provider);
    if (platform) return this.bootstrapPlatform(input, spec, platform.validateConfig);
    return spec.provider === 'url' ? this.deps.urls.create(input) : this.deps.folders.create(input);
  }

  /** A platform sync: its config checked by its connector; its key's scope is the folder it fills. */
  private async bootstrapPlatform(
    input: { projectId: string; provider: string; name?: string; config: Record<string, unknown>; createdBy: string | null },
    spec: ConnectorSpec,
    validate: ((config: Record<string, unknown>) => void) | undefined,
  ): Promise<{ sync: Sync; key: string }> {
    checkConfigFields(spec, input.config);
    validate?.(input.config);
    const folder = syncFolder(input.config, spec.provider);
    const issued = await this.deps.connections.createConnection({
      projectId: input.projectId,
      kind: 'sync',
      name: (input.name ?? `${spec.display_name} /${folder}`).slice(0, 200),
      scopePath: folder === '' ? undefined : folder,
      mode: 'read_write',
      createdBy: input.createdBy,
      config: { provider: spec.provider, ...input.config },
    });
    const state = await stateFor(this.deps, { syncId: issued.connection.id, projectId: input.projectId, provider: spec.provider, triggerMode: spec.default_sync_mode });
    return { sync: { state, connection: issued.connection }, key: issued.key };
  }

  async get(syncId: string): Promise<Sync> {
    const state = await this.deps.store.require(syncId);
    const connection = await this.deps.connections.find(syncId);
    if (!connection) throw new DomainError('NOT_FOUND', 'Sync not found.');
    return { state, connection };
  }

  async list(projectId: string): Promise<Sync[]> {
    const states = await this.deps.store.listByProject(projectId);
    const all = await Promise.all(states.map(async (state) => ({ state, connection: await this.deps.connections.find(state.sync_id) })));
    return all.filter((s): s is Sync => s.connection !== undefined);
  }

  /**
   * Sets the trigger: `manual`, `interval` (with `interval_s`, scheduled in the metadata store; platform and
   * url syncs), `webhook` (a new secret, answered once as `webhookSecret`) or a client mode
   * (`watch`). `interval_s` with another mode is refused rather than ignored.
   */
  async setTrigger(sync: Sync, input: { mode: string; intervalS?: number; field: string }): Promise<{ state: SyncStateRecord; webhookSecret: string | null }> {
    const spec = this.specFor(sync.state.provider);
    if (!spec?.sync_modes.includes(input.mode)) throw invalidField(input.field, `must be one of: ${spec?.sync_modes.join(', ') ?? 'none'}`);
    if (input.mode !== 'interval' && input.intervalS !== undefined) throw invalidField('interval_s', 'is only for mode interval');
    // Client modes (a folder sync's `watch`) are the client's to keep; the server schedules the rest.
    if (!this.isPlatform(sync) && sync.state.provider !== 'url') return { state: await this.deps.store.setTriggerMode(sync.state.sync_id, input.mode), webhookSecret: null };
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
    const state = await this.deps.runtime.schedule(sync.state.sync_id, input.mode, input.intervalS ?? null, sealed);
    return { state, webhookSecret: secret };
  }

  /** Pauses or resumes; pausing stops a run going on (recorded as interrupted). */
  async setPaused(sync: Sync, paused: boolean): Promise<SyncStateRecord> {
    return this.deps.runtime.setPaused(sync.state.sync_id, paused);
  }

  /** A run of a platform sync now, or the one already queued or running. */
  async runPlatform(sync: Sync, trigger: 'manual' | 'webhook'): Promise<RunHandle> {
    assertActive(sync);
    return this.deps.runtime.runNow(sync.state.sync_id, trigger);
  }

  /**
   * A webhook delivery: the body must be signed with the sync's secret (HMAC-SHA256 in
   * `X-Hub-Signature-256: sha256=<hex>`, GitHub's form); then a run starts (or the one going on
   * is answered). A delivery already accepted (the same `deliveryId`, or the same body and
   * signature under another id) is a duplicate: no run, the first delivery's run answered.
   */
  async webhook(syncId: string, body: Buffer, signature: string | undefined, deliveryId: string | null): Promise<{ duplicate: boolean; run: SyncRunRecord | null }> {
    const state = await this.deps.store.find(syncId);
    if (!state || !state.webhook_secret || state.trigger_mode !== 'webhook') throw new DomainError('NOT_FOUND', 'No webhook here.');
    const secret = this.deps.webhookBox.open(state.webhook_secret, syncId);
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    const given = Buffer.from(signature ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new DomainError('UNAUTHORIZED', 'The webhook signature (X-Hub-Signature-256) does not match this sync\'s secret.');
    }
    const sync = await this.get(syncId);
    assertActive(sync);
    const digest = WebhookDeliveries.digest(body, signature!);
    const claim = await this.deps.deliveries.claim(syncId, deliveryId, digest);
    if (claim.duplicate) return { duplicate: true, run: claim.runId ? ((await this.deps.store.findRun(claim.runId)) ?? null) : null };
    let handle: RunHandle;
    try {
      handle = await this.runPlatform(sync, 'webhook');
    } catch (err) {
      await this.deps.deliveries.release(syncId, digest);
      throw err;
    }
    await this.deps.deliveries.attachRun(syncId, digest, handle.run.id);
    return { duplicate: false, run: handle.run };
  }

  /** Deleting a sync stops its run and deletes its connection: its key stops working at once. Content stays. */
  async delete(sync: Sync): Promise<void> {
    await this.deps.runtime.forget(sync.state.sync_id);
    await this.deps.store.delete(sync.state.sync_id);
    await this.deps.connections.delete(sync.state.sync_id);
  }

  /**
   * A manual refresh. A `url` sync fetches its address now and writes it (one recorded run; a
   * failure is thrown as a RefreshFailed carrying it); a folder sync runs on its client
   * machine, which the server cannot reach.
   */
  async refresh(sync: Sync): Promise<SyncRunRecord> {
    assertActive(sync);
    if (sync.state.provider !== 'url') {
      throw new DomainError('CONFLICT', 'A folder sync runs on its client: run `cns sync DIR` (or keep `cns sync DIR --watch` running).', {
        reason: 'client_driven',
      });
    }
    return this.deps.urls.refresh(sync);
  }
}
