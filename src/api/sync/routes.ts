import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { asAppError, forbidden, notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import type { ProjectAction } from '../../policies/permissions.ts';
import { pathInScope } from '../../policies/scope.ts';
import { connectors } from '../../sync/connectors.ts';
import { scopedEntry } from '../../sync/scopedChanges.ts';
import type { Sync } from '../../sync/syncService.ts';
import { presentChange, presentPullEntry, presentRun, presentSync } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Data sync (spec 4.7). People manage syncs of projects they may write to; a sync's own key
 * (kind `sync`) may act only on its sync, and only that key moves files (push-file, pull-files,
 * ack-pull), so that every synced version carries actor type `sync`.
 */
export function syncRoutes(s: Services): Router {
  const router = new Router({ prefix: '/sync' });

  /** The sync of `:syncId` if the caller may perform `action` on it; others' syncs are not found. */
  function syncFor(ctx: Context, action: ProjectAction, ownKeyOnly = false): Sync {
    const { syncId } = parseInput(schema.syncParams, ctx.params, 'params');
    return allowedSync(ctx, syncId, action, ownKeyOnly);
  }

  function allowedSync(ctx: Context, syncId: string, action: ProjectAction, ownKeyOnly = false): Sync {
    const principal = principalOf(ctx);
    const state = s.syncStore.find(syncId);
    if (!state) throw notFound('Sync');
    if (principal.kind === 'key' && principal.connection.id !== syncId) throw notFound('Sync');
    if (ownKeyOnly && principal.kind !== 'key') throw forbidden('Only the sync\'s own access key moves files; `cns sync` uses it.');
    try {
      s.authorizer.requireProject(principal, state.project_id, action);
    } catch (err) {
      if (asAppError(err)?.code === 'NOT_FOUND') throw notFound('Sync');
      throw err;
    }
    return s.syncs.get(syncId);
  }

  router.get('/connectors', (ctx) => {
    ok(ctx, { connectors });
  });

  router.get('/status', (ctx) => {
    const { project_id } = parseInput(schema.projectQuery, ctx.query, 'query');
    s.authorizer.requireProject(principalOf(ctx), project_id, 'project:read');
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
  });

  router.get('/syncs', (ctx) => {
    const { project_id } = parseInput(schema.projectQuery, ctx.query, 'query');
    const principal = principalOf(ctx);
    s.authorizer.requireProject(principal, project_id, 'project:read');
    const visible = s.syncs.list(project_id).filter((x) => principal.kind === 'user' || x.state.sync_id === principal.id);
    ok(ctx, { syncs: visible.map((x) => presentSync(x.state, x.connection)), total: visible.length });
  });

  router.post('/bootstrap', (ctx) => {
    const body = parseInput(schema.bootstrapBody, ctx.request.body, 'body');
    const principal = s.authorizer.requireUser(principalOf(ctx));
    // A sync key can do no more than its creator, who must be able to write the project.
    const access = s.authorizer.requireProject(principal, body.project_id, 'content:write');
    const { sync, key } = s.syncs.bootstrap({
      projectId: access.project.id,
      provider: body.provider,
      name: body.name,
      config: body.config,
      createdBy: principal.id,
    });
    created(ctx, { sync: presentSync(sync.state, sync.connection), key }, 'Sync created; its key is shown only this once');
  });

  router.post('/syncs/:syncId/refresh', async (ctx) => {
    const sync = syncFor(ctx, 'content:write');
    ok(ctx, { run: presentRun(await s.syncs.refresh(sync)) }, 'Refreshed');
  });

  router.post('/syncs/:syncId/pause', (ctx) => {
    const sync = syncFor(ctx, 'content:write');
    const state = s.syncStore.setStatus(sync.state.sync_id, 'paused');
    ok(ctx, presentSync(state, sync.connection), 'Paused');
  });

  router.post('/syncs/:syncId/resume', (ctx) => {
    const sync = syncFor(ctx, 'content:write');
    const state = s.syncStore.setStatus(sync.state.sync_id, 'active');
    ok(ctx, presentSync(state, sync.connection), 'Resumed');
  });

  router.patch('/syncs/:syncId/trigger', (ctx) => {
    const sync = syncFor(ctx, 'content:write');
    const { trigger_mode } = parseInput(schema.triggerBody, ctx.request.body, 'body');
    ok(ctx, presentSync(s.syncs.setTriggerMode(sync, trigger_mode), sync.connection), 'Trigger mode updated');
  });

  router.delete('/syncs/:syncId', (ctx) => {
    const sync = syncFor(ctx, 'content:write');
    s.syncs.delete(sync);
    ok(ctx, { id: sync.state.sync_id, deleted: true }, 'Sync deleted; its key no longer works');
  });

  router.get('/syncs/:syncId/runs', (ctx) => {
    const sync = syncFor(ctx, 'content:read');
    const page = parseInput(schema.runsQuery, ctx.query, 'query');
    const { items, total } = s.syncStore.listRuns(sync.state.sync_id, page);
    ok(ctx, { runs: items.map(presentRun), ...pageInfo(total, page) });
  });

  router.get('/runs/:runId', (ctx) => {
    const { runId } = parseInput(schema.runParams, ctx.params, 'params');
    const run = s.syncStore.findRun(runId);
    if (!run) throw notFound('Run');
    allowedSync(ctx, run.sync_id, 'content:read');
    ok(ctx, presentRun(run));
  });

  router.post('/syncs/:syncId/push-file', async (ctx) => {
    const sync = syncFor(ctx, 'content:write', true);
    const body = parseInput(schema.pushBody, ctx.request.body, 'body');
    const ops = 'files' in body ? body.files : [body];
    for (const op of ops) {
      for (const p of op.action === 'move' ? [op.from, op.path] : [op.path]) {
        if (!pathInScope(sync.connection.scope_path, p)) throw forbidden(`This sync is limited to "${sync.connection.scope_path}".`);
      }
    }
    const result = await s.syncs.push(sync, ops, { runId: body.run_id, message: body.message });
    ok(ctx, { project_version: result.projectVersion, changed: result.changed, files: result.files }, result.changed ? 'Pushed' : 'Nothing changed');
  });

  router.get('/syncs/:syncId/pull-files', async (ctx) => {
    const sync = syncFor(ctx, 'content:read', true);
    const q = parseInput(schema.pullQuery, ctx.query, 'query');
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
  });

  router.post('/syncs/:syncId/ack-pull', (ctx) => {
    const sync = syncFor(ctx, 'content:read', true);
    const body = parseInput(schema.ackBody, ctx.request.body, 'body');
    const { state, run } = s.syncs.ack(sync, {
      cursor: body.cursor,
      runId: body.run_id,
      filesDown: body.files_down,
      conflicts: body.conflicts,
      errors: body.errors,
    });
    ok(ctx, { sync: presentSync(state, sync.connection), run: run ? presentRun(run) : null }, 'Acknowledged');
  });

  router.get('/changelog', (ctx) => {
    const q = parseInput(schema.changelogQuery, ctx.query, 'query');
    const access = s.authorizer.requireProject(principalOf(ctx), q.project_id, 'content:read');
    const page = s.changelog.page(q.project_id, q.cursor, q.limit);
    const entries = page.entries.map((e) => scopedEntry(access.scope, e)).filter((e) => e !== null);
    ok(ctx, { entries: entries.map(presentChange), cursor: page.cursor, has_more: page.hasMore });
  });

  return router;
}
