import { z } from 'zod';
import { bulkWrite } from '../../commands/bulkWrite.ts';
import { diffNodeVersions } from '../../commands/diffNodeVersions.ts';
import { diffProject } from '../../commands/diffProject.ts';
import { listNodeVersions } from '../../commands/listNodeVersions.ts';
import { listProjectCommits } from '../../commands/listProjectCommits.ts';
import { makeFolder } from '../../commands/makeFolder.ts';
import { moveNode } from '../../commands/moveNode.ts';
import { readNodeVersion } from '../../commands/readNodeVersion.ts';
import { parseSliceRange, readSlice } from '../../commands/readSlice.ts';
import { textSlices } from '../../content/slices/textSlices.ts';
import { removeNode } from '../../commands/removeNode.ts';
import { restoreNode } from '../../commands/restoreNode.ts';
import { rollbackNode } from '../../commands/rollbackNode.ts';
import { rollbackPath } from '../../commands/rollbackPath.ts';
import { rollbackProject } from '../../commands/rollbackProject.ts';
import { writeNode } from '../../commands/writeNode.ts';
import type { Settings } from '../../config/settings.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import type { TreeNode } from '../../content/types.ts';
import type { Changelog } from '../../events/changelog.ts';
import { sendBytes } from '../../http/byteRange.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { parseListInput } from '../../http/validate.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { presentFolderMade, presentMove, presentNodeRollback, presentPathRollback, presentRemoval } from '../../presenters/changes.ts';
import { puppyOneOnly } from '../../presenters/compat.ts';
import { presentContent, presentTrashItem } from '../../presenters/content.ts';
import { presentNodeDiff, presentNodeVersion, presentProjectCommits, presentProjectDiff, presentVersionList } from '../../presenters/history.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import type { PresentedNode, PresentedTree } from '../../presenters/node.ts';
import { contentForStore } from '../shared/fileContent.ts';
import * as schema from './schemas.ts';

/** The files (not folders) of a tree page, depth first, as path and type. */
function filesOf(root: TreeNode): { path: string; type: 'json' | 'markdown' | 'file' }[] {
  const out: { path: string; type: 'json' | 'markdown' | 'file' }[] = [];
  const walk = (n: TreeNode) => {
    for (const c of n.children ?? []) {
      if (c.type === 'folder') walk(c);
      else out.push({ path: c.path, type: c.type });
    }
  };
  walk(root);
  return out;
}

/** The nodes of a tree page below its root, depth first, without their `children` (PuppyOne's flat `entries`). */
function flatEntries(root: PresentedTree): PresentedNode[] {
  const out: PresentedNode[] = [];
  const walk = (n: PresentedTree) => {
    for (const c of n.children ?? []) {
      const { children: _children, ...entry } = c;
      out.push(entry);
      walk(c);
    }
  };
  walk(root);
  return out;
}

/** Most nodes a bulk write lists in its answer (`nodes_truncated` says when there were more). */
const MAX_LISTED_NODES = 1000;

/** What the path surface uses: the content store, the policy's finer checks, the changelog and the service's address. */
export interface ContentRouteDeps {
  content: ContentStore;
  access: ContentAccess;
  changelog: Changelog;
  settings: Pick<Settings, 'baseUrl'>;
}

/**
 * The path-addressed content surface (spec 4.1): validate, authorize through the content door
 * (keys are held to their scope path; each route declares the paths it touches), run the
 * command, present. No content rules live here (src/commands/).
 */
export function contentRoutes(s: ContentRouteDeps): RouteGroup {
  const store = s.content;
  const params = schema.projectParams;
  const project = ({ params }: { params: { projectId: string } }) => params.projectId;
  const present = () => nodePresenter(store, 'path');

  /**
   * A history read route (versions, diff): without `path` the project's, as far as the caller's
   * scope reaches; with `path` the node's there (which must be in scope).
   */
  const historyRoute = <Q extends z.ZodType<{ path?: string }>>(
    d: { path: string; summary: string; query: Q; response: z.ZodType },
    of: (q: z.output<Q>) => { project: (g: ContentGrant) => unknown; node: (node: NodeInfo) => unknown },
  ) =>
    route({
      method: 'get',
      ...d,
      permission: 'content:read',
      authorize: { content: project, paths: ({ query }) => [query.path] },
      params,
      async handle(ctx, { params: { projectId }, query, access }) {
        const answer = of(query);
        ok(ctx, await (query.path === undefined ? answer.project(access) : answer.node(store.getByPath(projectId, query.path))));
      },
    });

  /** Where a trash item goes back to when no original_path is given: where it was deleted from, else its name (after `.trash/<id>_`) at the root. */
  const restoreTarget = (projectId: string, trashPath: string) => {
    const item = store.listTrash(projectId).find((t) => t.trashPath === trashPath);
    if (item?.originalPath) return item.originalPath;
    const last = trashPath.split('/').pop() ?? trashPath;
    return item?.name ?? last.replace(/^[^_]+_/, '');
  };

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
        authorize: { content: project },
        params,
        query: schema.pathQuery,
        response: schema.lsAnswer,
        handle(ctx, { params: { projectId }, query: { path }, access }) {
          // Scope first: a key learns nothing (not even "not found") about paths beside its scope.
          s.access.listing(access, path);
          const entries = s.access.visibleChildren(access, path, store.listChildren(projectId, path));
          const p = present();
          ok(ctx, { path, entries: entries.map((n) => p.node(n)) });
        },
      }),
      route({
        method: 'get',
        path: '/cat',
        summary: 'A node with its content (json, markdown) or its download address (files); with lines or bytes, just that slice',
        description:
          'With `lines=START-END` (1-based, inclusive) or `bytes=START-END` (0-based, inclusive; `START-` reads to the end): only that slice, with the ' +
          "content's total lines and bytes. Text, Markdown and JSON (its stored, pretty-printed text) are sliced as UTF-8 text; a byte range gives whole " +
          'characters (a character begun before START is skipped, one begun inside the range is given whole). Binary files: bytes only, as base64 ' +
          '(lines are a 422). Past the end: an empty slice with the totals.',
        permission: 'content:read',
        authorize: { content: project, paths: ({ query }) => [query.path] },
        params,
        query: schema.catQuery,
        response: z.union([schema.catAnswer, schema.catSliceAnswer]),
        async handle(ctx, { params: { projectId }, query: { path, lines, bytes } }) {
          const range = parseSliceRange({ lines, bytes });
          const node = store.getByPath(projectId, path);
          const base = { id: node.id, path: node.path, name: node.name, type: node.type, version: node.version, content_hash: node.contentHash };
          if (range) {
            ok(ctx, { ...base, ...(await readSlice(textSlices, node, range, () => store.contentOf(node))) });
          } else if (node.type === 'folder') {
            ok(ctx, { ...base, children_count: node.childrenCount ?? 0 });
          } else if (node.type === 'file') {
            ok(ctx, { ...base, size: node.size, mime_type: node.mimeType, download_url: downloadUrl(projectId, node.path) });
          } else {
            ok(ctx, { ...base, ...presentContent(node.type, await store.contentOf(node)) });
          }
        },
      }),
      route({
        method: 'get',
        path: '/raw',
        summary: "A node's current content as bytes",
        description: 'Not an envelope: the bytes of the content with its media type, an ETag (the content hash) and Range support.',
        permission: 'content:read',
        authorize: { content: project, paths: ({ query }) => [query.path] },
        params,
        query: schema.requiredPathQuery,
        streams: 'application/octet-stream',
        async handle(ctx, { params: { projectId }, query: { path } }) {
          const { node, bytes } = await store.readContent(projectId, { path });
          sendBytes(ctx, bytes, { etag: node.contentHash!, contentType: node.mimeType ?? 'application/octet-stream', filename: node.name });
        },
      }),
      route({
        method: 'get',
        path: '/stat',
        summary: "A node's metadata (no path: the project root, a folder without id)",
        permission: 'content:read',
        authorize: { content: project, paths: ({ query }) => [query.path] },
        params,
        query: schema.pathQuery,
        response: schema.statAnswer,
        handle(ctx, { params: { projectId }, query: { path } }) {
          ok(ctx, { ...present().node(store.statPath(projectId, path)), exists: true });
        },
      }),
      route({
        method: 'get',
        path: '/tree',
        summary: 'A folder and everything beneath it, in pages of nodes',
        description: 'A key scoped below the folder sees the folders on the way down to its scope and everything inside it.',
        permission: 'content:read',
        authorize: { content: project },
        params,
        query: schema.treeQuery,
        response: schema.treeAnswer,
        async handle(ctx, { params: { projectId }, query, access: g }) {
          s.access.listing(g, query.path); // outside the scope and not on the way down: forbidden
          const visibility = (p: string) => (s.access.mayPath(g, p) ? 'in' : s.access.onTheWay(g, p) ? 'way' : 'out') as 'in' | 'way' | 'out';
          const page = await store.treePage(projectId, query.path, { maxDepth: query.max_depth, limit: query.limit, cursor: query.cursor, visibility });
          const tree = present().tree(page.root);
          ok(ctx, { ...tree, node_count: page.count, next_cursor: page.nextCursor, ...puppyOneOnly(() => ({ entries: flatEntries(tree) })) });
        },
      }),
      route({
        method: 'get',
        path: '/paths',
        summary: 'Every file path under a folder, in large pages of paths and types only',
        description:
          'For a client that needs the whole project by name (the dashboard\'s quick open): the tree\'s walk and cursors (depth first, a cursor stays correct when the tree changes in between), without the per-node metadata. ' +
          'A key scoped below the folder sees the files inside its scope.',
        permission: 'content:read',
        authorize: { content: project },
        params,
        query: schema.pathsQuery,
        response: schema.pathsAnswer,
        async handle(ctx, { params: { projectId }, query, access: g }) {
          s.access.listing(g, query.path);
          const visibility = (p: string) => (s.access.mayPath(g, p) ? 'in' : s.access.onTheWay(g, p) ? 'way' : 'out') as 'in' | 'way' | 'out';
          const page = await store.treePage(projectId, query.path, { maxDepth: -1, limit: query.limit, cursor: query.cursor, visibility });
          ok(ctx, { files: filesOf(page.root), node_count: page.count, next_cursor: page.nextCursor });
        },
      }),
      route({
        method: 'get',
        path: '/trash',
        summary: 'The trash: items deleted from inside the caller\'s scope',
        permission: 'content:read',
        authorize: { content: project },
        params,
        response: schema.trashAnswer,
        handle(ctx, { params: { projectId }, access }) {
          const items = s.access.visibleTrash(access, store.listTrash(projectId));
          const presented = items.map(presentTrashItem);
          // PuppyOne's clients list `entries`, each named by its path under .trash/
          ok(ctx, { items: presented, total: items.length, ...puppyOneOnly(() => ({ entries: presented.map((t) => ({ ...t, path: t.trash_path })) })) });
        },
      }),
      route({
        method: 'post',
        path: '/write',
        summary: 'Create or update a json, markdown or file node at a path (one commit)',
        description: '201 when the write created the node, 200 when it changed (or left unchanged) an existing one.',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.path] },
        status: 201,
        alsoStatus: 200,
        params,
        body: schema.writeBody,
        response: schema.writeAnswer,
        async handle(ctx, { body, access }) {
          const r = await writeNode(s, access, {
            path: body.path,
            type: body.node_type,
            content: contentForStore(body.node_type, body.content),
            baseVersion: body.base_version,
            message: body.message,
          });
          // 201 when the write created the node, 200 when it updated one (README "API conventions").
          ok(ctx, { ...present().node(r.node), changed: r.changed, project_version: r.projectVersion, commit_id: r.commitId },
            r.created ? 'Created' : r.changed ? 'Written' : 'Content unchanged; no new version', r.created ? 201 : 200);
        },
      }),
      route({
        method: 'post',
        path: '/mkdir',
        summary: 'Create a folder (and its parents); 200 when it already exists',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.path] },
        status: 201,
        alsoStatus: 200,
        params,
        body: schema.mkdirBody,
        response: schema.mkdirAnswer,
        async handle(ctx, { body, access }) {
          const r = await makeFolder(s, access, body);
          ok(ctx, presentFolderMade(present(), r), r.changed ? 'Folder created' : 'Folder already exists', r.changed ? 201 : 200);
        },
      }),
      route({
        method: 'post',
        path: '/mv',
        summary: 'Move or rename a node (a folder with everything beneath it)',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.old_path, body.new_path] },
        params,
        body: schema.mvBody,
        response: schema.mvAnswer,
        async handle(ctx, { body, access }) {
          const r = await moveNode(s, access, { from: body.old_path, to: body.new_path, message: body.message });
          ok(ctx, presentMove(present(), r), 'Moved');
        },
      }),
      route({
        method: 'post',
        path: '/move',
        summary: 'Move or rename a node: mv by the names of PuppyOne\'s earlier clients ({src, dst})',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.src, body.dst] },
        params,
        body: schema.moveBody,
        response: schema.mvAnswer,
        async handle(ctx, { body, access }) {
          const r = await moveNode(s, access, { from: body.src, to: body.dst, message: body.message });
          ok(ctx, presentMove(present(), r), 'Moved');
        },
      }),
      route({
        method: 'post',
        path: '/rm',
        summary: 'Move a node to the trash, or delete it permanently',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.path] },
        params,
        body: schema.rmBody,
        response: schema.rmAnswer,
        async handle(ctx, { body, access }) {
          const r = await removeNode(s, access, { target: { path: body.path }, permanent: body.permanent, message: body.message });
          ok(ctx, presentRemoval(r), r.permanent ? 'Deleted permanently' : 'Moved to the trash');
        },
      }),
      route({
        method: 'post',
        path: '/restore',
        summary: 'Restore a trash item to a path',
        permission: 'content:write',
        authorize: { content: project, paths: ({ params, body }) => [body.original_path ?? restoreTarget(params.projectId, body.trash_path)] },
        params,
        body: schema.restoreBody,
        response: schema.restoreAnswer,
        async handle(ctx, { params: { projectId }, body, access }) {
          const originalPath = body.original_path ?? restoreTarget(projectId, body.trash_path);
          const r = await restoreNode(s, access, { trashPath: body.trash_path, originalPath, message: body.message });
          ok(ctx, { ...present().node(r.node), restored_from: r.from, old_path: r.from, new_path: r.node.path }, 'Restored');
        },
      }),
      route({
        method: 'post',
        path: '/bulk-write',
        summary: 'Write many files in one commit',
        permission: 'content:write',
        // The paths are checked in the handler: 100,000 of them, in time slices.
        authorize: { content: project },
        params,
        response: schema.bulkWriteAnswer,
        description: 'Body: `{files: [{path, node_type, content}], message?}` (up to 100,000 files, checked one by one without holding the server).',
        async handle(ctx, { access }) {
          // 100,000 files are checked, scoped and decoded in time slices (parseListInput).
          const body = await parseListInput(schema.bulkWriteBody, 'files', schema.bulkWriteFile, ctx.request.body, (f, i) => {
            s.access.requirePath(access, f.path);
            return { path: f.path, type: f.node_type, content: contentForStore(f.node_type, f.content, `files.${i}.content`) };
          });
          const r = await bulkWrite(s, access, body);
          const p = present();
          ok(
            ctx,
            {
              changed: r.changed,
              count: r.count,
              changed_count: r.nodes.length,
              project_version: r.projectVersion,
              commit_id: r.commitId,
              // Bounded: a write of 100,000 files answers with the first nodes, not a 40 MB list.
              nodes: r.nodes.slice(0, MAX_LISTED_NODES).map((n) => p.node(n)),
              nodes_truncated: r.nodes.length > MAX_LISTED_NODES,
              total: r.count, // PuppyOne's names for count and project_version
              version: r.projectVersion,
            },
            `Wrote ${r.count} files in one commit`,
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
        (q) => ({
          project: (g) => presentProjectCommits(listProjectCommits(s, g, { limit: q.limit, before: q.before })),
          node: async (node) =>
            q.version === undefined ? presentVersionList(listNodeVersions(s, node, { limit: q.limit, sinceVersion: q.since_version })) : presentNodeVersion(await readNodeVersion(s, node, q.version)),
        }),
      ),
      route({
        method: 'get',
        path: '/version-content',
        summary: 'One version of a node with its content',
        permission: 'content:read',
        authorize: { content: project, paths: ({ query }) => [query.path] },
        params,
        query: schema.versionContentQuery,
        response: schema.versionWithContentAnswer,
        async handle(ctx, { params: { projectId }, query: q }) {
          ok(ctx, presentNodeVersion(await readNodeVersion(s, store.getByPath(projectId, q.path), q.version)));
        },
      }),
      historyRoute(
        {
          path: '/diff',
          summary: 'Without path: the paths changed between two project versions; with path: two versions of a node',
          query: schema.diffQuery,
          response: schema.diffAnswer,
        },
        (q) => ({
          project: (g) => presentProjectDiff(diffProject(s, g, { v1: q.v1, v2: q.v2 })),
          node: async (node) => presentNodeDiff(await diffNodeVersions(s, node, q.v1, q.v2)),
        }),
      ),
      route({
        method: 'post',
        path: '/rollback',
        summary: 'Roll back a node ({path, version}), a path ({path, target_version}) or the whole project ({target_version})',
        permission: 'content:write',
        authorize: { content: project, paths: ({ body }) => [body.path] },
        params,
        body: schema.rollbackBody,
        response: schema.rollbackAnswer,
        async handle(ctx, { params: { projectId }, body, access }) {
          if (body.target_version !== undefined && body.path !== undefined) {
            const r = await rollbackPath(s, access, { path: body.path, targetVersion: body.target_version, message: body.message });
            ok(ctx, presentPathRollback(store, r), `${r.path} rolled back to project version ${r.targetVersion}`);
            return;
          }
          if (body.target_version !== undefined) {
            const r = await rollbackProject(s, access, { targetVersion: body.target_version, message: body.message });
            const p = present();
            ok(
              ctx,
              {
                target_version: r.targetVersion,
                changed: r.changed,
                project_version: r.projectVersion,
                commit_id: r.commitId,
                nodes: r.nodes.map((n) => p.node(n)),
                // PuppyOne's names: the project version the rollback made, and the one it went back to
                new_version: r.projectVersion,
                rolled_back_to: r.targetVersion,
              },
              `Project rolled back to version ${r.targetVersion}`,
            );
            return;
          }
          const r = await rollbackNode(s, access, { node: store.getByPath(projectId, body.path!), version: body.version!, message: body.message });
          ok(ctx, presentNodeRollback(store, r), `Rolled back to version ${r.restoredVersion}`);
        },
      }),
    ],
  };
}
