import type { ContentStore } from '../../content/contentStore.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import { invalidField } from '../../errors/domainError.ts';
import type { Changelog } from '../../events/changelog.ts';
import { redactUrl, redactUrlsIn } from '../../logging/redact.ts';
import { checkStringFields, type ConnectorSpec } from '../../sync/connectorSpec.ts';
import { storedContent } from '../../sync/pushOps.ts';
import type { Sync, SyncRunRecord } from '../../sync/syncRecords.ts';
import { actorOfSync, stateFor } from '../../sync/syncs.ts';
import type { SyncStore } from '../../sync/syncStore.ts';
import { fetchUrl } from './urlFetch.ts';

/** A url sync: one address fetched into one node of the project on each refresh. */
export const urlConnector: ConnectorSpec = {
  provider: 'url',
  display_name: 'Web address',
  description: 'Fetches one public URL into a node of the project on each refresh, and on an interval when set to one.',
  auth: { type: 'public', description: 'Plain HTTP(S) GET without credentials.' },
  sync_modes: ['manual', 'interval'],
  default_sync_mode: 'manual',
  directions: ['pull'],
  config_fields: [
    { name: 'url', type: 'url', required: true, description: 'http or https address to fetch.' },
    { name: 'path', type: 'path', required: true, description: 'Project path the fetched content is written to; its extension gives the node type.' },
  ],
};

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

/**
 * Url syncs: created with their address checked, refreshed through the outbound guard on demand
 * or by the sync scheduler (interval mode). One refresh of a sync at a time: another asked for
 * meanwhile (a manual one during a scheduled one, say) joins it.
 */
export class UrlSyncs {
  private readonly going = new Map<string, Promise<SyncRunRecord>>();

  constructor(
    private readonly deps: {
      store: Pick<SyncStore, 'create' | 'startRun' | 'countUp' | 'finishRun'>;
      connections: Pick<AccessConnectionStore, 'createConnection' | 'delete'>;
      content: Pick<ContentStore, 'write'>;
      changelog: Pick<Changelog, 'latest'>;
      maxContentBytes: number;
      /** Let url syncs fetch loopback and private addresses (off by default). */
      allowPrivate?: boolean;
      /** The cluster node this process is, recorded on the runs it fetches (the platform runtime's start-up interrupts only its own); null on a single box. */
      nodeId: string | null;
    },
  ) {}

  /** Creates a url sync: its `sync` connection (the key returned once, reaching the whole project) and its state. */
  async create(input: { projectId: string; name?: string; config: Record<string, unknown>; createdBy: string | null }): Promise<{ sync: Sync; key: string }> {
    checkStringFields(urlConnector, input.config);
    try {
      const u = new URL(String(input.config.url));
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw invalidField('config.url', 'must be an http or https address');
    }
    const issued = await this.deps.connections.createConnection({
      projectId: input.projectId,
      kind: 'sync',
      name: input.name ?? `url ${redactUrl(String(input.config.url))}`.slice(0, 200),
      scopePath: undefined,
      mode: 'read_write',
      createdBy: input.createdBy,
      config: { provider: urlConnector.provider, ...input.config },
    });
    const state = await stateFor(this.deps, {
      syncId: issued.connection.id,
      projectId: input.projectId,
      provider: urlConnector.provider,
      triggerMode: urlConnector.default_sync_mode,
    });
    return { sync: { state, connection: issued.connection }, key: issued.key };
  }

  /**
   * Fetches the address now and writes it (one recorded run, `trigger` manual or interval), or
   * joins the refresh of the sync going on. A failed fetch or write is recorded as a failed run
   * and then thrown as a RefreshFailed carrying that run.
   */
  refresh(sync: Sync, trigger: 'manual' | 'interval' = 'manual'): Promise<SyncRunRecord> {
    const id = sync.state.sync_id;
    let run = this.going.get(id);
    if (!run) {
      run = this.fetchAndWrite(sync, trigger).finally(() => this.going.delete(id));
      this.going.set(id, run);
    }
    return run;
  }

  private async fetchAndWrite(sync: Sync, trigger: string): Promise<SyncRunRecord> {
    const { store, content } = this.deps;
    const config = JSON.parse(sync.connection.config) as { url: string; path: string };
    const run = await store.startRun(sync.state, trigger, null, this.deps.nodeId);
    try {
      const { bytes } = await fetchUrl(config.url, { maxBytes: this.deps.maxContentBytes, allowPrivate: this.deps.allowPrivate });
      const { type, content: value } = storedContent(config.path, bytes);
      await content.write(sync.state.project_id, actorOfSync(sync.connection), { path: config.path, type, content: value, message: redactUrlsIn(`sync ${sync.connection.name}: fetch ${redactUrl(config.url)}`) });
      await store.countUp(run.id, 1);
      return await store.finishRun(run.id, { cursorTo: this.deps.changelog.latest(sync.state.project_id) });
    } catch (err) {
      throw new RefreshFailed(await store.finishRun(run.id, { errors: [(err as Error).message] }), err);
    }
  }
}
