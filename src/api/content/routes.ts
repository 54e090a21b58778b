import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import { actorOf } from '../../auth/principal.ts';
import { sendBytes } from '../../http/byteRange.ts';
import { ok } from '../../http/envelope.ts';
import { forbidden, notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput, parseListInput } from '../../http/validate.ts';
import type { ProjectAction } from '../../policies/permissions.ts';
import { pathAboveScope, pathInScope } from '../../policies/scope.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { rollbackNodeTo, versionDiffOf, versionListOf, versionWithContent } from '../shared/history.ts';
import { projectCommitsOf, projectDiffOf, rollbackPathTo } from './projectHistory.ts';
import { presentContent, presentEntry, presentTrashItem, presentTree } from '../presenters/content.ts';
import * as schema from './schemas.ts';

/** Most nodes a bulk write lists in its answer (`nodes_truncated` says when there were more). */
const MAX_LISTED_NODES = 1000;

/**
 * The path-addressed content surface (spec 4.1): validate, authorize (keys are held to their
 * scope path), call the content store, present. No content rules live here.
 */
export function contentRoutes(s: Services): Router {
  const router = new Router({ prefix: '/content/:projectId' });
  const store = s.content;

  /** Authorizes `action` on the project and, for keys, on every path given. */
  function authorize(ctx: Context, action: ProjectAction, ...paths: string[]) {
    const { projectId } = parseInput(schema.projectParams, ctx.params, 'params');
    const principal = principalOf(ctx);
    const access = s.authorizer.requireProject(principal, projectId, action);
    for (const p of paths) {
      if (!pathInScope(access.scope, p)) throw forbidden(`This access key is limited to "${access.scope}".`);
    }
    return { projectId, principal, scope: access.scope, actor: actorOf(principal) };
  }

  const downloadUrl = (projectId: string, path: string) =>
    `${s.settings.baseUrl}/api/v1/content/${encodeURIComponent(projectId)}/raw?path=${encodeURIComponent(path)}`;

  router.get('/ls', (ctx) => {
    const { path } = parseInput(schema.pathQuery, ctx.query, 'query');
    const { projectId, scope } = authorize(ctx, 'content:read');
    if (!pathInScope(scope, path)) {
      // A scoped key may list the folders leading to its scope, but sees only the way down.
      if (!pathAboveScope(scope, path)) throw forbidden(`This access key is limited to "${scope}".`);
      const entries = store.listChildren(projectId, path).filter((n) => pathInScope(scope, n.path) || pathAboveScope(scope, n.path));
      ok(ctx, { path, entries: entries.map(presentEntry) });
      return;
    }
    ok(ctx, { path, entries: store.listChildren(projectId, path).map(presentEntry) });
  });

  router.get('/cat', async (ctx) => {
    const { path } = parseInput(schema.requiredPathQuery, ctx.query, 'query');
    const { projectId } = authorize(ctx, 'content:read', path);
    const node = store.getByPath(projectId, path);
    const base = { id: node.id, path: node.path, name: node.name, type: node.type, version: node.version, content_hash: node.contentHash };
    if (node.type === 'folder') {
      ok(ctx, { ...base, children_count: node.childrenCount ?? 0 });
    } else if (node.type === 'file') {
      ok(ctx, { ...base, size: node.size, mime_type: node.mimeType, download_url: downloadUrl(projectId, node.path) });
    } else {
      const { bytes } = await store.readContent(projectId, { id: node.id });
      ok(ctx, { ...base, ...presentContent(node.type, bytes) });
    }
  });

  router.get('/raw', async (ctx) => {
    const { path } = parseInput(schema.requiredPathQuery, ctx.query, 'query');
    const { projectId } = authorize(ctx, 'content:read', path);
    const { node, bytes } = await store.readContent(projectId, { path });
    sendBytes(ctx, bytes, { etag: node.contentHash!, contentType: node.mimeType ?? 'application/octet-stream', filename: node.name });
  });

  router.get('/stat', (ctx) => {
    // No path (or '') is the project root: a folder without id.
    const { path } = parseInput(schema.pathQuery, ctx.query, 'query');
    const { projectId } = authorize(ctx, 'content:read', path);
    ok(ctx, presentEntry(store.statPath(projectId, path)));
  });

  router.get('/tree', async (ctx) => {
    const { path, max_depth, limit, cursor } = parseInput(schema.treeQuery, ctx.query, 'query');
    const { projectId, scope } = authorize(ctx, 'content:read');
    // A scoped key sees the folders on the way to its scope (as with ls) and everything inside it.
    if (!pathInScope(scope, path) && !pathAboveScope(scope, path)) throw forbidden(`This access key is limited to "${scope}".`);
    const visibility = (p: string) => (pathInScope(scope, p) ? 'in' : pathAboveScope(scope, p) ? 'way' : 'out') as 'in' | 'way' | 'out';
    const page = await store.treePage(projectId, path, { maxDepth: max_depth, limit, cursor, visibility });
    ok(ctx, { ...presentTree(page.root), node_count: page.count, next_cursor: page.nextCursor });
  });

  router.get('/trash', (ctx) => {
    const { projectId, scope } = authorize(ctx, 'content:read');
    const items = store.listTrash(projectId).filter((t) => t.originalPath === null ? scope === '' : pathInScope(scope, t.originalPath));
    ok(ctx, { items: items.map(presentTrashItem), total: items.length });
  });

  router.post('/write', async (ctx) => {
    const body = parseInput(schema.writeBody, ctx.request.body, 'body');
    const { projectId, actor } = authorize(ctx, 'content:write', body.path);
    const result = await store.write(projectId, actor, {
      path: body.path,
      type: body.node_type,
      content: contentForStore(body.node_type, body.content),
      baseVersion: body.base_version,
      message: body.message,
    });
    // 201 when the write created the node, 200 when it updated one (README "API conventions").
    const wasCreated = result.changed && result.node.version === 1;
    ok(ctx, { ...presentEntry(result.node), changed: result.changed, project_version: result.projectVersion, commit_id: result.commitId },
      wasCreated ? 'Created' : result.changed ? 'Written' : 'Content unchanged; no new version', wasCreated ? 201 : 200);
  });

  router.post('/mkdir', async (ctx) => {
    const body = parseInput(schema.mkdirBody, ctx.request.body, 'body');
    const { projectId, actor } = authorize(ctx, 'content:write', body.path);
    const result = await store.mkdir(projectId, actor, body.path, { message: body.message });
    ok(ctx, { ...presentEntry(result.node), changed: result.changed }, result.changed ? 'Folder created' : 'Folder already exists', result.changed ? 201 : 200);
  });

  router.post('/mv', async (ctx) => {
    const body = parseInput(schema.mvBody, ctx.request.body, 'body');
    const { projectId, actor } = authorize(ctx, 'content:write', body.old_path, body.new_path);
    const result = await store.move(projectId, actor, body.old_path, body.new_path, { message: body.message });
    ok(ctx, { ...presentEntry(result.node), old_path: body.old_path, changed: result.changed }, 'Moved');
  });

  router.post('/rm', async (ctx) => {
    const body = parseInput(schema.rmBody, ctx.request.body, 'body');
    const { projectId, actor } = authorize(ctx, 'content:write', body.path);
    const before = store.getByPath(projectId, body.path);
    const result = await store.remove(projectId, actor, body.path, { permanent: body.permanent, message: body.message });
    const trashed = body.permanent ? null : (result.nodes.find((n) => n.id === before.id) ?? null);
    ok(
      ctx,
      { id: before.id, path: before.path, permanent: body.permanent, trash_path: trashed?.path ?? null, project_version: result.projectVersion },
      body.permanent ? 'Deleted permanently' : 'Moved to the trash',
    );
  });

  router.post('/restore', async (ctx) => {
    const body = parseInput(schema.restoreBody, ctx.request.body, 'body');
    const { projectId, actor, scope } = authorize(ctx, 'content:write', body.original_path);
    if (scope !== '') {
      const item = store.listTrash(projectId).find((t) => t.trashPath === body.trash_path);
      if (!item || item.originalPath === null || !pathInScope(scope, item.originalPath)) throw notFound('Trash item');
    }
    const result = await store.restore(projectId, actor, body.trash_path, body.original_path, { message: body.message });
    ok(ctx, { ...presentEntry(result.node), restored_from: body.trash_path }, 'Restored');
  });

  router.post('/bulk-write', async (ctx) => {
    const { projectId, actor, scope } = authorize(ctx, 'content:write');
    // 100,000 files are checked, scoped and decoded in time slices (parseListInput).
    const body = await parseListInput(schema.bulkWriteBody, 'files', schema.bulkWriteFile, ctx.request.body, (f, i) => {
      if (!pathInScope(scope, f.path)) throw forbidden(`This access key is limited to "${scope}".`);
      return { path: f.path, type: f.node_type, content: contentForStore(f.node_type, f.content, `files.${i}.content`) };
    });
    const files = body.files;
    const result = await store.bulkWrite(projectId, actor, files, { message: body.message });
    ok(
      ctx,
      {
        changed: result.changed,
        count: body.files.length,
        changed_count: result.nodes.length,
        project_version: result.projectVersion,
        commit_id: result.commitId,
        // Bounded: a write of 100,000 files answers with the first nodes, not a 40 MB list.
        nodes: result.nodes.slice(0, MAX_LISTED_NODES).map(presentEntry),
        nodes_truncated: result.nodes.length > MAX_LISTED_NODES,
      },
      `Wrote ${body.files.length} files in one commit`,
    );
  });

  router.get('/versions', async (ctx) => {
    const q = parseInput(schema.versionsQuery, ctx.query, 'query');
    if (q.path === undefined) {
      const { projectId, scope } = authorize(ctx, 'content:read');
      ok(ctx, projectCommitsOf(s.changelog, projectId, scope, { limit: q.limit, before: q.before }));
      return;
    }
    const { projectId } = authorize(ctx, 'content:read', q.path);
    const node = store.getByPath(projectId, q.path);
    if (q.version !== undefined) {
      ok(ctx, await versionWithContent(store, node, q.version));
      return;
    }
    ok(ctx, versionListOf(store, node, { limit: q.limit, sinceVersion: q.since_version }));
  });

  router.get('/version-content', async (ctx) => {
    const q = parseInput(schema.versionContentQuery, ctx.query, 'query');
    const { projectId } = authorize(ctx, 'content:read', q.path);
    ok(ctx, await versionWithContent(store, store.getByPath(projectId, q.path), q.version));
  });

  router.get('/diff', async (ctx) => {
    const q = parseInput(schema.diffQuery, ctx.query, 'query');
    if (q.path === undefined) {
      const { projectId, scope } = authorize(ctx, 'content:read');
      ok(ctx, projectDiffOf(s.changelog, projectId, scope, q.v1, q.v2));
      return;
    }
    const { projectId } = authorize(ctx, 'content:read', q.path);
    ok(ctx, await versionDiffOf(store, store.getByPath(projectId, q.path), q.v1, q.v2));
  });

  router.post('/rollback', async (ctx) => {
    const body = parseInput(schema.rollbackBody, ctx.request.body, 'body');
    if (body.target_version !== undefined && body.path !== undefined) {
      const { projectId, actor } = authorize(ctx, 'content:write', body.path);
      const r = await rollbackPathTo(store, projectId, actor, body.path, body.target_version, body.message);
      ok(ctx, r.data, r.message);
      return;
    }
    if (body.target_version !== undefined) {
      const { projectId, actor, scope } = authorize(ctx, 'content:write');
      if (scope !== '') throw forbidden('Rolling back the whole project needs a key scoped to the whole project.');
      const result = await store.rollbackProject(projectId, actor, body.target_version, { message: body.message });
      ok(
        ctx,
        { target_version: body.target_version, changed: result.changed, project_version: result.projectVersion, commit_id: result.commitId, nodes: result.nodes.map(presentEntry) },
        `Project rolled back to version ${body.target_version}`,
      );
      return;
    }
    const { projectId, actor } = authorize(ctx, 'content:write', body.path!);
    const r = await rollbackNodeTo(store, store.getByPath(projectId, body.path!), actor, body.version!, body.message);
    ok(ctx, r.data, r.message);
  });

  return router;
}
