import type { Context } from 'koa';
import type { z } from 'zod';
import type { Services } from '../../app/services.ts';
import type { NodeInfo } from '../../content/contentStore.ts';
import { sendBytes } from '../../http/byteRange.ts';
import { ok } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { parseListInput } from '../../http/validate.ts';
import type { ContentAction } from '../../policies/contentAccess.ts';
import { presentContent, presentTrashItem } from '../presenters/content.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { rollbackNodeTo, versionDiffOf, versionListOf, versionWithContent } from '../shared/history.ts';
import { nodePresenter } from '../shared/idPaths.ts';
import { projectCommitsOf, projectDiffOf, rollbackPathTo } from './projectHistory.ts';
import * as schema from './schemas.ts';

/** Most nodes a bulk write lists in its answer (`nodes_truncated` says when there were more). */
const MAX_LISTED_NODES = 1000;

/**
 * The path-addressed content surface (spec 4.1): validate, authorize through the content-access
 * policy (keys are held to their scope path), call the content store, present. No content
 * rules live here.
 */
export function contentRoutes(s: Services): RouteGroup {
  const store = s.content;
  const params = schema.projectParams;

  /** The policy's grant for `action` on the project, requiring every path given to be in scope. */
  function authorize(ctx: Context, projectId: string, action: ContentAction, ...paths: string[]) {
    return s.access.grantPaths(principalOf(ctx), projectId, action, paths);
  }
  const present = () => nodePresenter(store, 'path');

  /**
   * A history read route (versions, diff): without `path` the project's, as far as the caller's
   * scope reaches; with `path` the node's there (which must be in scope).
   */
  const historyRoute = <Q extends z.ZodType<{ path?: string }>>(
    d: { path: string; summary: string; query: Q; response: z.ZodType },
    of: (q: z.output<Q>, projectId: string) => { project: (scope: string) => unknown; node: (node: NodeInfo) => unknown },
  ) =>
    route({
      method: 'get',
      ...d,
      permission: 'content:read',
      params,
      async handle(ctx, { params: { projectId }, query }) {
        const answer = of(query, projectId);
        if (query.path === undefined) {
          ok(ctx, await answer.project(authorize(ctx, projectId, 'content:read').scope));
          return;
        }
        authorize(ctx, projectId, 'content:read', query.path);
        ok(ctx, await answer.node(store.getByPath(projectId, query.path)));
      },
    });

  const downloadUrl = (projectId: string, path: string) =>
    `${s.settings.baseUrl}/api/v1/content/${encodeURIComponent(projectId)}/raw?path=${encodeURIComponent(path)}`;

  return {
    prefix: '/content/:projectId',
    tag: 'Content (paths)',
    routes: [
      route({
        method: 'get',
        path: '/ls',
        summary: "A folder's children ('' = the project root)",
        description: 'A key scoped below the folder sees only the folders on the way down to its scope.',
        permission: 'content:read',
        params,
        query: schema.pathQuery,
        response: schema.lsAnswer,
        handle(ctx, { params: { projectId }, query: { path } }) {
          const g = authorize(ctx, projectId, 'content:read');
          // Scope first: a key learns nothing (not even "not found") about paths beside its scope.
          s.access.listing(g, path);
          const entries = s.access.visibleChildren(g, path, store.listChildren(projectId, path));
          const p = present();
          ok(ctx, { path, entries: entries.map((n) => p.node(n)) });
        },
      }),
      route({
        method: 'get',
        path: '/cat',
        summary: 'A node with its content (json, markdown) or its download address (files)',
        permission: 'content:read',
        params,
        query: schema.requiredPathQuery,
        response: schema.catAnswer,
        async handle(ctx, { params: { projectId }, query: { path } }) {
          authorize(ctx, projectId, 'content:read', path);
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
        },
      }),
      route({
        method: 'get',
        path: '/raw',
        summary: "A node's current content as bytes",
        description: 'Not an envelope: the bytes of the content with its media type, an ETag (the content hash) and Range support.',
        permission: 'content:read',
        params,
        query: schema.requiredPathQuery,
        streams: 'application/octet-stream',
        async handle(ctx, { params: { projectId }, query: { path } }) {
          authorize(ctx, projectId, 'content:read', path);
          const { node, bytes } = await store.readContent(projectId, { path });
          sendBytes(ctx, bytes, { etag: node.contentHash!, contentType: node.mimeType ?? 'application/octet-stream', filename: node.name });
        },
      }),
      route({
        method: 'get',
        path: '/stat',
        summary: "A node's metadata (no path: the project root, a folder without id)",
        permission: 'content:read',
        params,
        query: schema.pathQuery,
        response: schema.entryAnswer,
        handle(ctx, { params: { projectId }, query: { path } }) {
          authorize(ctx, projectId, 'content:read', path);
          ok(ctx, present().node(store.statPath(projectId, path)));
        },
      }),
      route({
        method: 'get',
        path: '/tree',
        summary: 'A folder and everything beneath it, in pages of nodes',
        description: 'A key scoped below the folder sees the folders on the way down to its scope and everything inside it.',
        permission: 'content:read',
        params,
        query: schema.treeQuery,
        response: schema.treeAnswer,
        async handle(ctx, { params: { projectId }, query }) {
          const g = authorize(ctx, projectId, 'content:read');
          s.access.listing(g, query.path); // outside the scope and not on the way down: forbidden
          const visibility = (p: string) => (s.access.mayPath(g, p) ? 'in' : s.access.onTheWay(g, p) ? 'way' : 'out') as 'in' | 'way' | 'out';
          const page = await store.treePage(projectId, query.path, { maxDepth: query.max_depth, limit: query.limit, cursor: query.cursor, visibility });
          ok(ctx, { ...present().tree(page.root), node_count: page.count, next_cursor: page.nextCursor });
        },
      }),
      route({
        method: 'get',
        path: '/trash',
        summary: 'The trash: items deleted from inside the caller\'s scope',
        permission: 'content:read',
        params,
        response: schema.trashAnswer,
        handle(ctx, { params: { projectId } }) {
          const g = authorize(ctx, projectId, 'content:read');
          const items = s.access.visibleTrash(g, store.listTrash(projectId));
          ok(ctx, { items: items.map(presentTrashItem), total: items.length });
        },
      }),
      route({
        method: 'post',
        path: '/write',
        summary: 'Create or update a json, markdown or file node at a path (one commit)',
        description: '201 when the write created the node, 200 when it changed (or left unchanged) an existing one.',
        permission: 'content:write',
        status: 201,
        alsoStatus: 200,
        params,
        body: schema.writeBody,
        response: schema.writeAnswer,
        async handle(ctx, { params: { projectId }, body }) {
          const { actor } = authorize(ctx, projectId, 'content:write', body.path);
          const result = await store.write(projectId, actor, {
            path: body.path,
            type: body.node_type,
            content: contentForStore(body.node_type, body.content),
            baseVersion: body.base_version,
            message: body.message,
          });
          // 201 when the write created the node, 200 when it updated one (README "API conventions").
          const wasCreated = result.changed && result.node.version === 1;
          ok(ctx, { ...present().node(result.node), changed: result.changed, project_version: result.projectVersion, commit_id: result.commitId },
            wasCreated ? 'Created' : result.changed ? 'Written' : 'Content unchanged; no new version', wasCreated ? 201 : 200);
        },
      }),
      route({
        method: 'post',
        path: '/mkdir',
        summary: 'Create a folder (and its parents); 200 when it already exists',
        permission: 'content:write',
        status: 201,
        alsoStatus: 200,
        params,
        body: schema.mkdirBody,
        response: schema.mkdirAnswer,
        async handle(ctx, { params: { projectId }, body: { path, message } }) {
          const { actor } = authorize(ctx, projectId, 'content:write', path);
          const result = await store.mkdir(projectId, actor, path, { message });
          ok(ctx, { ...present().node(result.node), changed: result.changed }, result.changed ? 'Folder created' : 'Folder already exists', result.changed ? 201 : 200);
        },
      }),
      route({
        method: 'post',
        path: '/mv',
        summary: 'Move or rename a node (a folder with everything beneath it)',
        permission: 'content:write',
        params,
        body: schema.mvBody,
        response: schema.mvAnswer,
        async handle(ctx, { params: { projectId }, body }) {
          const { actor } = authorize(ctx, projectId, 'content:write', body.old_path, body.new_path);
          const result = await store.move(projectId, actor, body.old_path, body.new_path, { message: body.message });
          ok(ctx, { ...present().node(result.node), old_path: body.old_path, changed: result.changed }, 'Moved');
        },
      }),
      route({
        method: 'post',
        path: '/rm',
        summary: 'Move a node to the trash, or delete it permanently',
        permission: 'content:write',
        params,
        body: schema.rmBody,
        response: schema.rmAnswer,
        async handle(ctx, { params: { projectId }, body }) {
          const { actor } = authorize(ctx, projectId, 'content:write', body.path);
          const before = store.getByPath(projectId, body.path);
          const result = await store.remove(projectId, actor, body.path, { permanent: body.permanent, message: body.message });
          const trashed = body.permanent ? null : (result.nodes.find((n) => n.id === before.id) ?? null);
          ok(
            ctx,
            { id: before.id, path: before.path, permanent: body.permanent, trash_path: trashed?.path ?? null, project_version: result.projectVersion },
            body.permanent ? 'Deleted permanently' : 'Moved to the trash',
          );
        },
      }),
      route({
        method: 'post',
        path: '/restore',
        summary: 'Restore a trash item to a path',
        permission: 'content:write',
        params,
        body: schema.restoreBody,
        response: schema.restoreAnswer,
        async handle(ctx, { params: { projectId }, body }) {
          const g = authorize(ctx, projectId, 'content:write', body.original_path);
          // Trash items the caller may not see are not found, whatever they are.
          if (g.scope !== '' && !s.access.visibleTrash(g, store.listTrash(projectId)).some((t) => t.trashPath === body.trash_path)) throw notFound('Trash item');
          const result = await store.restore(projectId, g.actor, body.trash_path, body.original_path, { message: body.message });
          ok(ctx, { ...present().node(result.node), restored_from: body.trash_path }, 'Restored');
        },
      }),
      route({
        method: 'post',
        path: '/bulk-write',
        summary: 'Write many files in one commit',
        permission: 'content:write',
        params,
        response: schema.bulkWriteAnswer,
        description: 'Body: `{files: [{path, node_type, content}], message?}` (up to 100,000 files, checked one by one without holding the server).',
        async handle(ctx, { params: { projectId } }) {
          const g = authorize(ctx, projectId, 'content:write');
          // 100,000 files are checked, scoped and decoded in time slices (parseListInput).
          const body = await parseListInput(schema.bulkWriteBody, 'files', schema.bulkWriteFile, ctx.request.body, (f, i) => {
            s.access.requirePath(g, f.path);
            return { path: f.path, type: f.node_type, content: contentForStore(f.node_type, f.content, `files.${i}.content`) };
          });
          const result = await store.bulkWrite(projectId, g.actor, body.files, { message: body.message });
          const p = present();
          ok(
            ctx,
            {
              changed: result.changed,
              count: body.files.length,
              changed_count: result.nodes.length,
              project_version: result.projectVersion,
              commit_id: result.commitId,
              // Bounded: a write of 100,000 files answers with the first nodes, not a 40 MB list.
              nodes: result.nodes.slice(0, MAX_LISTED_NODES).map((n) => p.node(n)),
              nodes_truncated: result.nodes.length > MAX_LISTED_NODES,
            },
            `Wrote ${body.files.length} files in one commit`,
          );
        },
      }),
      historyRoute(
        {
          path: '/versions',
          summary: "Without path: the project's commits; with path: a node's versions (with version: that version's content)",
          query: schema.versionsQuery,
          response: schema.versionsAnswer,
        },
        (q, projectId) => ({
          project: (scope) => projectCommitsOf(s.changelog, projectId, scope, { limit: q.limit, before: q.before }),
          node: (node) => (q.version === undefined ? versionListOf(store, node, { limit: q.limit, sinceVersion: q.since_version }) : versionWithContent(store, node, q.version)),
        }),
      ),
      route({
        method: 'get',
        path: '/version-content',
        summary: 'One version of a node with its content',
        permission: 'content:read',
        params,
        query: schema.versionContentQuery,
        response: schema.versionWithContentAnswer,
        async handle(ctx, { params: { projectId }, query: q }) {
          authorize(ctx, projectId, 'content:read', q.path);
          ok(ctx, await versionWithContent(store, store.getByPath(projectId, q.path), q.version));
        },
      }),
      historyRoute(
        {
          path: '/diff',
          summary: 'Without path: the paths changed between two project versions; with path: two versions of a node',
          query: schema.diffQuery,
          response: schema.diffAnswer,
        },
        (q, projectId) => ({
          project: (scope) => projectDiffOf(s.changelog, projectId, scope, q.v1, q.v2),
          node: (node) => versionDiffOf(store, node, q.v1, q.v2),
        }),
      ),
      route({
        method: 'post',
        path: '/rollback',
        summary: 'Roll back a node ({path, version}), a path ({path, target_version}) or the whole project ({target_version})',
        permission: 'content:write',
        params,
        body: schema.rollbackBody,
        response: schema.rollbackAnswer,
        async handle(ctx, { params: { projectId }, body }) {
          if (body.target_version !== undefined && body.path !== undefined) {
            const { actor } = authorize(ctx, projectId, 'content:write', body.path);
            const r = await rollbackPathTo(store, projectId, actor, body.path, body.target_version, body.message);
            ok(ctx, r.data, r.message);
            return;
          }
          if (body.target_version !== undefined) {
            const g = authorize(ctx, projectId, 'content:write');
            s.access.requireWholeProject(g, 'Rolling back the whole project');
            const result = await store.rollbackProject(projectId, g.actor, body.target_version, { message: body.message });
            const p = present();
            ok(
              ctx,
              { target_version: body.target_version, changed: result.changed, project_version: result.projectVersion, commit_id: result.commitId, nodes: result.nodes.map((n) => p.node(n)) },
              `Project rolled back to version ${body.target_version}`,
            );
            return;
          }
          const { actor } = authorize(ctx, projectId, 'content:write', body.path!);
          const r = await rollbackNodeTo(store, store.getByPath(projectId, body.path!), actor, body.version!, body.message);
          ok(ctx, r.data, r.message);
        },
      }),
    ],
  };
}
