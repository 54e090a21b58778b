import { z } from 'zod';
import type { Settings } from '../../config/settings.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { Changelog } from '../../events/changelog.ts';
import { created, ok } from '../../http/envelope.ts';
import { AppError, asAppError, forbidden, notFound, validationError } from '../../http/errors.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { Authorizer, ProjectAccess } from '../../policies/authorize.ts';
import { grantOf, type ContentAccess } from '../../policies/contentAccess.ts';
import { scopedEntry } from '../../events/scopedChanges.ts';
import type { SyncService } from '../../platform/syncService.ts';
import { RefreshFailed } from '../../platform/url/urlSync.ts';
import type { FolderSyncService } from '../../sync/folderSync.ts';
import type { SyncStore } from '../../sync/syncStore.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentChange, presentPullEntry, presentRun, presentSync } from './presenter.ts';
import * as schema from './schemas.ts';
import { registerRawBodyRoute } from '../../http/middleware/bodyParser.ts';
import type { Sync, SyncRunRecord, SyncStateRecord } from '../../sync/syncRecords.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import type { RunHandle } from '../../platform/runtime/syncRuntime.ts';

// Platforms post webhooks unparsed: the signature is over the raw body.
registerRawBodyRoute('POST', /^\/api\/v1\/sync\/webhooks\/[^/]+$/);

/** How long a refresh waits for its run before answering 202 with the run still going. */
const REFRESH_WAIT_MS = 20_000;
/** Largest webhook delivery read (a run needs none of it; GitHub's push events are small). */
const WEBHOOK_MAX_BYTES = 1024 * 1024;
/** Longest delivery id kept (GitHub's are GUIDs). */
const MAX_DELIVERY_ID = 200;

export interface SyncRouteDeps {
  syncs: SyncService;
  /** The folder-sync protocol of `cns sync` (push-file, pull-files, ack-pull). */
  folderSync: Pick<FolderSyncService, 'pull' | 'push' | 'ack'>;
  syncStore: Pick<SyncStore, 'find' | 'findRun' | 'lastRun' | 'listRuns'>;
  changelog: Pick<Changelog, 'latest' | 'page'>;
  /** Node versions named by PuppyOne's ack-pull items. */
  content: Pick<ContentStore, 'getVersion'>;
  /** Finer checks: every path a push touches lies in the key's scope. */
  access: Pick<ContentAccess, 'requirePath'>;
  authorizer: Pick<Authorizer, 'requireUser'>;
  /** Webhook addresses are built on the public URL. */
  settings: Pick<Settings, 'baseUrl'>;
}

/**
 * Data sync (spec 4.7). People manage syncs of projects they may write to; a sync's own key
 * (kind `sync`) may act only on its sync, and only that key moves files (push-file, pull-files,
 * ack-pull), so that every synced version carries actor type `sync`. Content access goes through
 * the content-access policy: the sync's key is a key principal like any other, limited to its
 * scope path and mode.
 */
export function syncRoutes(s: SyncRouteDeps): RouteGroup {
  /** A sync by id: one of a project the caller cannot see is "Sync not found." */
  const syncById = { resource: ({ params }: { params: { syncId: string } }) => s.syncStore.find(params.syncId), name: 'Sync' };
  /** A run's sync: an unknown run is "Run not found."; a run of a sync the caller cannot see is "Sync not found.", as the sync is. */
  const runSync = {
    resource: async ({ params }: { params: { runId: string } }) => {
      const run = await s.syncStore.findRun(params.runId);
      if (!run) throw notFound('Run');
      return s.syncStore.find(run.sync_id);
    },
    name: 'Sync',
  };
  /**
   * The sync the route's check found, as this caller may act on it: a key reaches only its own
   * sync (another sync is not found to it), and with `ownKeyOnly` only that key may act.
   */
  async function syncOf({ principal, record }: ProjectAccess & { record: SyncStateRecord }, ownKeyOnly: boolean | 'orOwner' = false): Promise<Sync> {
    if (principal.kind === 'key' && principal.connection.id !== record.sync_id) throw notFound('Sync');
    const sync = await s.syncs.get(record.sync_id);
    // Reading (pull-files) is also open to the user who made the sync, with their own token (PuppyOne's clients pull so); writes stay the key's.
    const owner = ownKeyOnly === 'orOwner' && principal.kind === 'user' && sync.connection.created_by === principal.id;
    if (ownKeyOnly && principal.kind !== 'key' && !owner) {
      throw forbidden(ownKeyOnly === 'orOwner' ? 'Only the sync\'s own access key, or the user who made the sync, pulls its files.' : 'Only the sync\'s own access key moves files; `cns sync` uses it.');
    }
    return sync;
  }

  /** PuppyOne's acknowledged items as a cursor: the newest commit among the node versions they name (each must be in the sync's project). */
  function ackedCursor(sync: Sync, items: readonly { node_id?: string; path?: string; version: number }[]): number {
    const projectId = sync.state.project_id;
    return Math.max(
      ...items.map((item, i) => {
        try {
          return s.content.getVersion(projectId, item.node_id !== undefined ? { id: item.node_id } : { path: item.path! }, item.version).projectVersion;
        } catch (e) {
          if (asAppError(e)?.status === 404) throw validationError(`items.${i} names no version of a node of this project.`, [{ field: `items.${i}`, message: 'no such node version' }]);
          throw e;
        }
      }),
    );
  }

  const manage = 'content:write';
  const present = (state: SyncStateRecord, c: ConnectionRecord) => presentSync(state, c, s.settings.baseUrl);

  /** The run once finished, or null when it is still going after `ms`. */
  async function settled(handle: RunHandle, ms: number): Promise<SyncRunRecord | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
    try {
      return await Promise.race([handle.done, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    prefix: '/sync',
    tag: 'Sync',
    routes: [
      route({
        method: 'get',
        path: '/connectors',
        summary: 'The connectors a sync may use, with their configuration fields',
        authorize: { signedIn: "what this server's syncs can connect to; nothing of any project" },
        response: schema.connectorList,
        handle(ctx) {
          ok(ctx, { connectors: s.syncs.specs() });
        },
      }),
      route({
        method: 'get',
        path: '/status',
        summary: "A project's syncs at a glance",
        permission: 'project:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.projectQuery,
        response: schema.syncStatus,
        async handle(ctx, { query: { project_id } }) {
          const syncs = await s.syncs.list(project_id);
          const last = syncs.map((x) => x.state.last_run_at).filter((t): t is string => t !== null).sort().pop() ?? null;
          const lastRuns = await Promise.all(syncs.map(async (x) => (await s.syncStore.lastRun(x.state.sync_id)) ?? null));
          ok(ctx, {
            project_id,
            project_version: s.changelog.latest(project_id),
            syncs: syncs.length,
            active: syncs.filter((x) => x.state.status === 'active').length,
            paused: syncs.filter((x) => x.state.status === 'paused').length,
            last_run_at: last,
            providers: s.syncs.specs().map((c) => c.provider),
            runs: {
              queued: lastRuns.filter((r) => r?.status === 'queued').length,
              running: lastRuns.filter((r) => r?.status === 'running').length,
              failed_last: lastRuns.filter((r) => r?.status === 'failed').length,
            },
            needs_reauth: syncs.filter((x) => x.state.status === 'paused' && x.state.pause_reason === 'needs_reauth').length,
            items: syncs.map((x, i) => ({
              id: x.state.sync_id,
              provider: x.state.provider,
              name: x.connection.name,
              status: x.state.status,
              pause_reason: x.state.status === 'paused' ? x.state.pause_reason : null,
              trigger_mode: x.state.trigger_mode,
              next_run_at: x.state.trigger_mode === 'interval' ? x.state.next_run_at : null,
              last_run: lastRuns[i] ? presentRun(lastRuns[i]) : null,
            })),
          });
        },
      }),
      route({
        method: 'get',
        path: '/syncs',
        summary: "A project's syncs (a sync key sees only its own)",
        permission: 'project:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.projectQuery,
        response: schema.syncList,
        async handle(ctx, { query, access: { principal } }) {
          const visible = (await s.syncs.list(query.project_id)).filter((x) => principal.kind === 'user' || x.state.sync_id === principal.id);
          ok(ctx, { syncs: visible.map((x) => present(x.state, x.connection)), total: visible.length });
        },
      }),
      route({
        method: 'post',
        path: '/bootstrap',
        summary: 'Create a sync with its own access key (shown once); needs a user sign-in',
        permission: manage,
        // A sync key can do no more than its creator, who must be able to write the project.
        authorize: { project: ({ body }) => body.project_id },
        status: 201,
        body: schema.bootstrapBody,
        response: schema.syncWithKey,
        async handle(ctx, { body, access }) {
          const principal = s.authorizer.requireUser(access.principal);
          const { sync, key } = await s.syncs.bootstrap({
            projectId: access.project.id,
            provider: body.provider,
            name: body.name,
            config: body.config,
            createdBy: principal.id,
          });
          created(ctx, { sync: present(sync.state, sync.connection), key }, 'Sync created; its key is shown only this once');
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/refresh',
        summary: 'Run the sync now (url syncs fetch their address); a failed run is answered with its record in the details',
        description:
          'A platform sync (github, notion, linear, airtable) starts a run, or joins the one already queued or running, and answers it once finished (within 20 s), else 202 with the run still going: poll GET /sync/runs/{run_id}.',
        permission: manage,
        authorize: syncById,
        params: schema.syncParams,
        response: z.object({ run: schema.runSchema }),
        alsoStatus: 202,
        async handle(ctx, { access }) {
          const sync = await syncOf(access);
          if (s.syncs.isPlatform(sync)) {
            const handle = await s.syncs.runPlatform(sync, 'manual');
            const done = await settled(handle, REFRESH_WAIT_MS);
            const run = done ?? (await s.syncStore.findRun(handle.run.id));
            // Deleting the sync's connection (DELETE /connections/{id}) deletes the sync and its runs, even during a run.
            if (!run) throw notFound('Sync');
            if (!done) return ok(ctx, { run: presentRun(run) }, 'Running; poll the run', 202);
            return ok(ctx, { run: presentRun(done) }, done.status === 'succeeded' ? 'Refreshed' : `The run ${done.status}`);
          }
          try {
            ok(ctx, { run: presentRun(await s.syncs.refresh(sync)) }, 'Refreshed');
          } catch (err) {
            if (!(err instanceof RefreshFailed)) throw err;
            // The run is recorded either way; the answer says it failed, with the content store's own
            // code when writing failed, else 502: the address the sync fetches failed.
            const code = asAppError(err.cause)?.code ?? 'UPSTREAM_ERROR';
            const run = presentRun(err.run);
            const details = code === 'VALIDATION_ERROR' ? [{ field: 'config.path', message: err.message, run }] : { run };
            throw new AppError(code, `The refresh failed: ${err.message}`, details);
          }
        },
      }),
      ...(['pause', 'resume'] as const).map((verb) =>
        route({
          method: 'post',
          path: `/syncs/:syncId/${verb}`,
          summary: verb === 'pause' ? 'Pause a sync' : 'Resume a paused sync',
          permission: manage,
          authorize: syncById,
          params: schema.syncParams,
          response: schema.syncSchema,
          async handle(ctx, { access }) {
            const sync = await syncOf(access);
            const state = await s.syncs.setPaused(sync, verb === 'pause');
            ok(ctx, present(state, sync.connection), verb === 'pause' ? 'Paused' : 'Resumed');
          },
        }),
      ),
      route({
        method: 'patch',
        path: '/syncs/:syncId/trigger',
        summary: "Change a sync's trigger: manual, interval (every `interval_s`, jittered) or webhook (one of its connector's sync_modes)",
        description:
          'Interval syncs (platform and url syncs) are run by the service\'s scheduler (the next run time survives restarts; at most one run of a sync at a time). Webhook mode answers the signing secret once, with `webhook_url`: the platform posts there, signed with X-Hub-Signature-256.',
        permission: manage,
        authorize: syncById,
        params: schema.syncParams,
        body: schema.triggerBody,
        response: schema.triggerResult,
        async handle(ctx, { body, access }) {
          const sync = await syncOf(access);
          const mode = (body.mode ?? body.trigger_mode)!;
          const { state, webhookSecret } = await s.syncs.setTrigger(sync, { mode, intervalS: body.interval_s, field: body.mode !== undefined ? 'mode' : 'trigger_mode' });
          ok(ctx, { ...present(state, sync.connection), ...(webhookSecret ? { webhook_secret: webhookSecret } : {}) }, 'Trigger updated');
        },
      }),
      route({
        method: 'delete',
        path: '/syncs/:syncId',
        summary: 'Delete a sync; its key stops working',
        permission: manage,
        authorize: syncById,
        params: schema.syncParams,
        response: deletedSchema,
        async handle(ctx, { access }) {
          const sync = await syncOf(access);
          await s.syncs.delete(sync);
          ok(ctx, presentDeleted(sync.state.sync_id), 'Sync deleted; its key no longer works');
        },
      }),
      route({
        method: 'post',
        path: '/webhooks/:syncId',
        summary: 'A platform tells a webhook sync that something changed: a run starts (signed with the sync\'s secret)',
        description:
          'No credential: the body must be signed with the secret PATCH …/trigger {mode: webhook} gave, as `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` (401 otherwise). Answers 202 with the run started, or the one already going. A delivery already accepted (the same `X-GitHub-Delivery`, or the same body and signature under another id) is answered 200 with `duplicate: true` and starts nothing.',
        authorize: { public: "platforms post without our credential: the signature with the sync's webhook secret is the check" },
        params: schema.syncParams,
        status: 202,
        alsoStatus: 200,
        response: schema.webhookResult,
        async handle(ctx, { params }) {
          const deliveryId = ctx.get('x-github-delivery') || null;
          if (deliveryId !== null && deliveryId.length > MAX_DELIVERY_ID) {
            throw validationError('X-GitHub-Delivery is too long.', [{ field: 'X-GitHub-Delivery', message: `must be at most ${MAX_DELIVERY_ID} characters` }]);
          }
          const body = await readRaw(ctx.req, WEBHOOK_MAX_BYTES);
          const { duplicate, run } = await s.syncs.webhook(params.syncId, body, ctx.get('x-hub-signature-256') || undefined, deliveryId);
          if (duplicate) return ok(ctx, { duplicate, run: run && presentRun(run) }, 'Duplicate delivery: already received, no run started');
          ok(ctx, { duplicate, run: run && presentRun(run) }, 'Run started', 202);
        },
      }),
      route({
        method: 'get',
        path: '/syncs/:syncId/runs',
        summary: "A sync's runs, newest first",
        permission: 'content:read',
        authorize: syncById,
        params: schema.syncParams,
        query: schema.runsQuery,
        response: schema.runList,
        async handle(ctx, { query, access }) {
          const sync = await syncOf(access);
          const { items, total } = await s.syncStore.listRuns(sync.state.sync_id, query);
          ok(ctx, { runs: items.map(presentRun), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/runs/:runId',
        summary: 'Read one run',
        permission: 'content:read',
        authorize: runSync,
        params: schema.runParams,
        response: schema.runSchema,
        async handle(ctx, { params, access }) {
          await syncOf(access);
          ok(ctx, presentRun((await s.syncStore.findRun(params.runId))!));
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/push-file',
        summary: "Write, delete or move files as one commit (the sync's own key only)",
        description:
          'One change with its fields at the top level, or `files`, a list of changes applied as one commit. Every path must lie inside the sync key\'s scope (403 otherwise, before anything is written).',
        permission: manage,
        authorize: syncById,
        params: schema.syncParams,
        body: schema.pushBody,
        response: schema.pushResult,
        async handle(ctx, { body, access }) {
          const sync = await syncOf(access, true);
          const grant = grantOf(access, manage);
          if ('external_resource_id' in body) {
            // PuppyOne's push of one file: a write at its path below the sync's scope.
            const path = sync.connection.scope_path === '' ? body.external_resource_id : `${sync.connection.scope_path}/${body.external_resource_id}`;
            s.access.requirePath(grant, path);
            const op = { action: 'write' as const, path, content: Buffer.from(body.text, 'utf8').toString('base64'), node_type: body.node_type, base_version: body.base_version };
            const result = await s.folderSync.push(sync, [op], { runId: body.run_id, message: body.message });
            const file = result.files[0] as { version?: number | null };
            const action = !result.changed ? 'skipped' : file.version === 1 ? 'created' : 'updated';
            ok(ctx, { project_version: result.projectVersion, changed: result.changed, files: result.files, action }, result.changed ? 'Pushed' : 'Nothing changed');
            return;
          }
          const ops = 'files' in body ? body.files : [body];
          for (const op of ops) for (const p of op.action === 'move' ? [op.from, op.path] : [op.path]) s.access.requirePath(grant, p);
          const result = await s.folderSync.push(sync, ops, { runId: body.run_id, message: body.message });
          ok(ctx, { project_version: result.projectVersion, changed: result.changed, files: result.files }, result.changed ? 'Pushed' : 'Nothing changed');
        },
      }),
      route({
        method: 'get',
        path: '/syncs/:syncId/pull-files',
        summary: "The files changed in the sync's scope since `cursor`, paged (the sync's own key only)",
        permission: 'content:read',
        authorize: syncById,
        params: schema.syncParams,
        query: schema.pullQuery,
        response: schema.pullPage,
        async handle(ctx, { query: q, access }) {
          const sync = await syncOf(access, 'orOwner');
          const page = await s.folderSync.pull(sync, { cursor: q.cursor, until: q.until, after: q.after, limit: q.limit, runId: q.run_id, withContent: q.content, ids: q.ids });
          ok(ctx, {
            run_id: page.runId,
            scope_path: sync.connection.scope_path,
            cursor: page.cursor,
            // From cursor 0 the answer is the whole subtree: what it does not list no longer exists.
            snapshot: q.cursor === 0,
            has_more: page.hasMore,
            next_after: page.nextAfter,
            files: page.entries.map((e) => presentPullEntry(e.entry, e.content, sync.connection.scope_path)),
          });
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/ack-pull',
        summary: 'Confirm the client applied changes up to `cursor`, closing the run (the sync\'s own key only)',
        permission: 'content:read',
        authorize: syncById,
        params: schema.syncParams,
        body: schema.ackBody,
        response: schema.ackResult,
        async handle(ctx, { body, access }) {
          const sync = await syncOf(access, true);
          const { state, run } = await s.folderSync.ack(sync, {
            cursor: body.cursor ?? ackedCursor(sync, body.items!),
            runId: body.run_id,
            filesDown: body.files_down,
            conflicts: body.conflicts,
            errors: body.errors,
          });
          ok(ctx, { sync: present(state, sync.connection), run: run ? presentRun(run) : null }, 'Acknowledged');
        },
      }),
      route({
        method: 'get',
        path: '/changelog',
        summary: "A project's changes since `cursor` (a scoped key sees only its scope)",
        permission: 'content:read',
        authorize: { content: ({ query }) => query.project_id },
        query: schema.changelogQuery,
        response: schema.changelogPage,
        handle(ctx, { query: q, access: grant }) {
          const page = s.changelog.page(q.project_id, q.cursor, q.limit);
          const entries = page.entries.map((e) => scopedEntry(grant.scope, e)).filter((e) => e !== null);
          ok(ctx, { entries: entries.map(presentChange), cursor: page.cursor, has_more: page.hasMore });
        },
      }),
    ],
  };
}

/** A request body as bytes, at most `max` (413 beyond). */
async function readRaw(req: AsyncIterable<Buffer>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.byteLength;
    if (size > max) throw new AppError('PAYLOAD_TOO_LARGE', `The webhook body is larger than ${max} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
