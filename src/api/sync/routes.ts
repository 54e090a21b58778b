import type { Context } from 'koa';
import { z } from 'zod';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { AppError, asAppError, forbidden, notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAction, ContentGrant } from '../../policies/contentAccess.ts';
import { connectors } from '../../sync/connectors.ts';
import { scopedEntry } from '../../sync/scopedChanges.ts';
import { RefreshFailed, type Sync } from '../../sync/syncService.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentChange, presentPullEntry, presentRun, presentSync } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Data sync (spec 4.7). People manage syncs of projects they may write to; a sync's own key
 * (kind `sync`) may act only on its sync, and only that key moves files (push-file, pull-files,
 * ack-pull), so that every synced version carries actor type `sync`. Content access goes through
 * the content-access policy: the sync's key is a key principal like any other, limited to its
 * scope path and mode.
 */
export function syncRoutes(s: Services): RouteGroup {
  /** The sync `syncId` if the caller may perform `action` on it, with the caller's grant; others' syncs are not found. */
  function allowedSync(ctx: Context, syncId: string, action: ContentAction, ownKeyOnly = false): { sync: Sync; grant: ContentGrant } {
    const principal = principalOf(ctx);
    const state = s.syncStore.find(syncId);
    if (!state) throw notFound('Sync');
    if (principal.kind === 'key' && principal.connection.id !== syncId) throw notFound('Sync');
    // Access first: to a caller with no relation to the project the sync does not exist (404).
    let grant: ContentGrant;
    try {
      grant = s.access.grant(principal, state.project_id, action);
    } catch (err) {
      if (asAppError(err)?.code === 'NOT_FOUND') throw notFound('Sync');
      throw err;
    }
    if (ownKeyOnly && principal.kind !== 'key') throw forbidden('Only the sync\'s own access key moves files; `cns sync` uses it.');
    return { sync: s.syncs.get(syncId), grant };
  }
  const syncFor = (ctx: Context, syncId: string, action: ContentAction) => allowedSync(ctx, syncId, action).sync;

  const manage = 'content:write';
  return {
    prefix: '/sync',
    tag: 'Sync',
    routes: [
      route({
        method: 'get',
        path: '/connectors',
        summary: 'The connectors a sync may use, with their configuration fields',
        response: schema.connectorList,
        handle(ctx) {
          ok(ctx, { connectors });
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
        handle(ctx, { query: { project_id } }) {
          const syncs = s.syncs.list(project_id);
          const last = syncs.map((x) => x.state.last_run_at).filter((t): t is string => t !== null).sort().pop() ?? null;
          ok(ctx, {
            project_id,
            project_version: s.changelog.latest(project_id),
            syncs: syncs.length,
            active: syncs.filter((x) => x.state.status === 'active').length,
            paused: syncs.filter((x) => x.state.status === 'paused').length,
            last_run_at: last,
            providers: connectors.map((c) => c.provider),
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
        handle(ctx, { query }) {
          const principal = principalOf(ctx);
          const visible = s.syncs.list(query.project_id).filter((x) => principal.kind === 'user' || x.state.sync_id === principal.id);
          ok(ctx, { syncs: visible.map((x) => presentSync(x.state, x.connection)), total: visible.length });
        },
      }),
      route({
        method: 'post',
        path: '/bootstrap',
        summary: 'Create a sync with its own access key (shown once); needs a user sign-in',
        permission: manage,
        status: 201,
        body: schema.bootstrapBody,
        response: schema.syncWithKey,
        handle(ctx, { body }) {
          const principal = s.authorizer.requireUser(principalOf(ctx));
          // A sync key can do no more than its creator, who must be able to write the project.
          const grant = s.access.grant(principal, body.project_id, manage);
          const { sync, key } = s.syncs.bootstrap({
            projectId: grant.projectId,
            provider: body.provider,
            name: body.name,
            config: body.config,
            createdBy: principal.id,
          });
          created(ctx, { sync: presentSync(sync.state, sync.connection), key }, 'Sync created; its key is shown only this once');
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/refresh',
        summary: 'Run the sync now (url syncs fetch their address); a failed run is answered with its record in the details',
        permission: manage,
        params: schema.syncParams,
        response: z.object({ run: schema.runSchema }),
        async handle(ctx, { params }) {
          const sync = syncFor(ctx, params.syncId, manage);
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
          params: schema.syncParams,
          response: schema.syncSchema,
          handle(ctx, { params }) {
            const sync = syncFor(ctx, params.syncId, manage);
            const state = s.syncStore.setStatus(sync.state.sync_id, verb === 'pause' ? 'paused' : 'active');
            ok(ctx, presentSync(state, sync.connection), verb === 'pause' ? 'Paused' : 'Resumed');
          },
        }),
      ),
      route({
        method: 'patch',
        path: '/syncs/:syncId/trigger',
        summary: "Change a sync's trigger mode (one of its connector's sync_modes)",
        permission: manage,
        params: schema.syncParams,
        body: schema.triggerBody,
        response: schema.syncSchema,
        handle(ctx, { params, body }) {
          const sync = syncFor(ctx, params.syncId, manage);
          ok(ctx, presentSync(s.syncs.setTriggerMode(sync, body.trigger_mode), sync.connection), 'Trigger mode updated');
        },
      }),
      route({
        method: 'delete',
        path: '/syncs/:syncId',
        summary: 'Delete a sync; its key stops working',
        permission: manage,
        params: schema.syncParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          const sync = syncFor(ctx, params.syncId, manage);
          s.syncs.delete(sync);
          ok(ctx, presentDeleted(sync.state.sync_id), 'Sync deleted; its key no longer works');
        },
      }),
      route({
        method: 'get',
        path: '/syncs/:syncId/runs',
        summary: "A sync's runs, newest first",
        permission: 'content:read',
        params: schema.syncParams,
        query: schema.runsQuery,
        response: schema.runList,
        handle(ctx, { params, query }) {
          const sync = syncFor(ctx, params.syncId, 'content:read');
          const { items, total } = s.syncStore.listRuns(sync.state.sync_id, query);
          ok(ctx, { runs: items.map(presentRun), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/runs/:runId',
        summary: 'Read one run',
        permission: 'content:read',
        params: schema.runParams,
        response: schema.runSchema,
        handle(ctx, { params }) {
          const run = s.syncStore.findRun(params.runId);
          if (!run) throw notFound('Run');
          allowedSync(ctx, run.sync_id, 'content:read');
          ok(ctx, presentRun(run));
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/push-file',
        summary: "Write, delete or move files as one commit (the sync's own key only)",
        description:
          'One change with its fields at the top level, or `files`, a list of changes applied as one commit. Every path must lie inside the sync key\'s scope (403 otherwise, before anything is written).',
        permission: manage,
        params: schema.syncParams,
        body: schema.pushBody,
        response: schema.pushResult,
        async handle(ctx, { params, body }) {
          const { sync, grant } = allowedSync(ctx, params.syncId, manage, true);
          const ops = 'files' in body ? body.files : [body];
          for (const op of ops) for (const p of op.action === 'move' ? [op.from, op.path] : [op.path]) s.access.requirePath(grant, p);
          const result = await s.syncs.push(sync, ops, { runId: body.run_id, message: body.message });
          ok(ctx, { project_version: result.projectVersion, changed: result.changed, files: result.files }, result.changed ? 'Pushed' : 'Nothing changed');
        },
      }),
      route({
        method: 'get',
        path: '/syncs/:syncId/pull-files',
        summary: "The files changed in the sync's scope since `cursor`, paged (the sync's own key only)",
        permission: 'content:read',
        params: schema.syncParams,
        query: schema.pullQuery,
        response: schema.pullPage,
        async handle(ctx, { params, query: q }) {
          const { sync } = allowedSync(ctx, params.syncId, 'content:read', true);
          const page = await s.syncs.pull(sync, { cursor: q.cursor, until: q.until, after: q.after, limit: q.limit, runId: q.run_id, withContent: q.content, ids: q.ids });
          ok(ctx, {
            run_id: page.runId,
            scope_path: sync.connection.scope_path,
            cursor: page.cursor,
            // From cursor 0 the answer is the whole subtree: what it does not list no longer exists.
            snapshot: q.cursor === 0,
            has_more: page.hasMore,
            next_after: page.nextAfter,
            files: page.entries.map((e) => presentPullEntry(e.entry, e.content)),
          });
        },
      }),
      route({
        method: 'post',
        path: '/syncs/:syncId/ack-pull',
        summary: 'Confirm the client applied changes up to `cursor`, closing the run (the sync\'s own key only)',
        permission: 'content:read',
        params: schema.syncParams,
        body: schema.ackBody,
        response: schema.ackResult,
        handle(ctx, { params, body }) {
          const { sync } = allowedSync(ctx, params.syncId, 'content:read', true);
          const { state, run } = s.syncs.ack(sync, {
            cursor: body.cursor,
            runId: body.run_id,
            filesDown: body.files_down,
            conflicts: body.conflicts,
            errors: body.errors,
          });
          ok(ctx, { sync: presentSync(state, sync.connection), run: run ? presentRun(run) : null }, 'Acknowledged');
        },
      }),
      route({
        method: 'get',
        path: '/changelog',
        summary: "A project's changes since `cursor` (a scoped key sees only its scope)",
        permission: 'content:read',
        query: schema.changelogQuery,
        response: schema.changelogPage,
        handle(ctx, { query: q }) {
          const grant = s.access.grant(principalOf(ctx), q.project_id, 'content:read');
          const page = s.changelog.page(q.project_id, q.cursor, q.limit);
          const entries = page.entries.map((e) => scopedEntry(grant.scope, e)).filter((e) => e !== null);
          ok(ctx, { entries: entries.map(presentChange), cursor: page.cursor, has_more: page.hasMore });
        },
      }),
    ],
  };
}
