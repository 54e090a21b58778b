import type { Context } from 'koa';
import { makeFolder } from '../../commands/makeFolder.ts';
import { moveNodeInto } from '../../commands/moveNode.ts';
import { removeNode } from '../../commands/removeNode.ts';
import { writeNode } from '../../commands/writeNode.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { joinPath, parentPath } from '../../content/paths.ts';
import { created, ok } from '../../http/envelope.ts';
import { notFound, validationError } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { nodeSchema } from '../../presenters/node.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { nodeById } from '../shared/nodeHistory.ts';
import { nodesWithContent, nodeWithContent } from '../shared/nodeReads.ts';
import { withItems } from '../../presenters/items.ts';
import * as answer from './answers.ts';
import { parentFolder } from './parentFolder.ts';
import * as schema from './schemas.ts';

/** What the id surface uses: the content store and the policy's finer checks (a parent folder, a new name, each node of a batch). */
export interface NodeRouteDeps {
  content: ContentStore;
  access: ContentAccess;
}

/**
 * The id-addressed node surface (spec 4.2): reads and writes by node id, as thin adapters over
 * the commands (src/commands/); a node written here is the node the path surface shows, same
 * id, same versions. History, snapshots and transfers have their own routers.
 */
export function nodeRoutes(s: NodeRouteDeps): RouteGroup {
  const store = s.content;
  const present = () => nodePresenter(store, 'id');
  const inQueryProject = { content: ({ query }: { query: { project_id: string } }) => query.project_id };
  const inBodyProject = { content: ({ body }: { body: { project_id: string } }) => body.project_id };
  const routes: RouteDeclaration[] = [];

  routes.push(route({
    method: 'get',
    path: '/',
    summary: "A folder's children by parent id (the root without parent_id)",
    permission: 'content:read',
    authorize: inQueryProject,
    query: schema.childrenQuery,
    response: answer.nodeList,
    async handle(ctx, { query: q, access: g }) {
      let folder: NodeInfo | null = null;
      if (q.parent_id !== undefined) {
        folder = store.findById(q.parent_id);
        if (!folder || folder.projectId !== q.project_id) throw notFound('Parent folder');
        if (folder.type !== 'folder') throw validationError('parent_id is not a folder.', [{ field: 'parent_id', message: 'not a folder' }]);
      }
      // A scoped key may list the folders above its scope, but sees only the way down.
      const mode = folder ? (s.access.mayNode(g, folder) ? 'all' : s.access.listing(g, folder.state === 'active' ? folder.path : '.trash')) : s.access.listing(g, '');
      let children = store.listChildrenOf(q.project_id, folder?.id ?? null);
      if (mode === 'way-down') children = children.filter((n) => s.access.onTheWay(g, n.path));
      ok(ctx, { project_id: q.project_id, parent_id: folder?.id ?? null, ...withItems('nodes', await nodesWithContent(store, children, q.include_content)), total: children.length });
    },
  }));

  routes.push(route({
    method: 'get',
    path: '/by-path',
    summary: 'A node by its path',
    permission: 'content:read',
    // Not `paths`: an unknown path is "not found" before its scope is asked, and a trashed node counts where it was deleted from.
    authorize: inQueryProject,
    query: schema.byPathQuery,
    response: nodeSchema,
    async handle(ctx, { query: q, access: g }) {
      const node = store.getByPath(q.project_id, q.path);
      s.access.requireNode(g, node);
      ok(ctx, await nodeWithContent(store, node, q.include_content, true));
    },
  }));

  for (const path of ['/by-id-path', '/by-id-path/']) {
    routes.push(route({
      method: 'get',
      path,
      summary: 'A node by the ids from the root down to it, joined by "/" (its id_path)',
      permission: 'content:read',
      authorize: inQueryProject,
      query: schema.byIdPathQuery,
      response: nodeSchema,
      async handle(ctx, { query: q, access: g }) {
        let parentId: string | null = null;
        let node: NodeInfo | null = null;
        for (const id of q.id_path.split('/').filter(Boolean)) {
          node = store.findById(id);
          if (!node || node.projectId !== q.project_id || node.parentId !== parentId || node.state !== 'active') {
            throw notFound(`Node ${id} as a child of ${parentId ?? 'the root'}`);
          }
          parentId = node.id;
        }
        if (!node) throw notFound('Node');
        s.access.requireNode(g, node);
        ok(ctx, await nodeWithContent(store, node, q.include_content, true));
      },
    }));
  }

  routes.push(route({
    method: 'get',
    path: '/batch',
    summary: 'Many nodes by id (ids=a,b,c); the unreachable ones are listed in missing',
    authorize: { checkedBy: 'each node is checked through the content-access policy: those the caller cannot read are listed in missing, not refused' },
    query: schema.batchQuery,
    response: answer.batchAnswer,
    async handle(ctx, { query: q }) {
      const grants = new Map<string, ContentGrant | null>();
      const nodes: NodeInfo[] = [];
      const missing: { id: string; code: 'NOT_FOUND' | 'FORBIDDEN' }[] = [];
      for (const id of q.ids) {
        const node = store.findById(id);
        if (!node || (q.project_id !== undefined && node.projectId !== q.project_id)) {
          missing.push({ id, code: 'NOT_FOUND' });
          continue;
        }
        if (!grants.has(node.projectId)) grants.set(node.projectId, await tryGrant(ctx, node.projectId));
        const g = grants.get(node.projectId)!;
        if (!g) missing.push({ id, code: 'NOT_FOUND' });
        else if (!s.access.mayNode(g, node)) missing.push({ id, code: 'FORBIDDEN' });
        else nodes.push(node);
      }
      ok(ctx, { nodes: await nodesWithContent(store, nodes, q.include_content), missing, total: nodes.length });
    },
  }));

  /** Batch reads report projects the caller cannot reach as not found instead of failing. */
  async function tryGrant(ctx: Context, projectId: string): Promise<ContentGrant | null> {
    try {
      return await s.access.grant(principalOf(ctx), projectId, 'content:read');
    } catch {
      return null;
    }
  }

  /** The path a node about to be created gets (its parent folder's child `name`), which must lie in the caller's scope. */
  function newPath(g: ContentGrant, body: { parent_id?: string | null; name: string }): string {
    const path = joinPath(parentFolder(store, g, body.parent_id).path, body.name);
    s.access.requirePath(g, path);
    return path;
  }

  routes.push(route({
    method: 'post',
    path: '/folder',
    summary: 'Create a folder (409 when the path exists)',
    permission: 'content:write',
    authorize: inBodyProject,
    status: 201,
    body: schema.folderBody,
    response: nodeSchema,
    async handle(ctx, { body, access: g }) {
      const r = await makeFolder(s, g, { path: newPath(g, body), message: body.message, exclusive: true });
      created(ctx, present().node(r.node), 'Folder created');
    },
  }));

  // JSON and Markdown nodes are created alike; only the schema of their content differs.
  const documentKinds = [
    { type: 'json', body: schema.jsonBody, label: 'JSON' },
    { type: 'markdown', body: schema.markdownBody, label: 'Markdown' },
  ] as const;
  for (const { type, body: bodySchema, label } of documentKinds) {
    routes.push(route({
      method: 'post',
      path: `/${type}`,
      summary: `Create a ${label} node`,
      permission: 'content:write',
      authorize: inBodyProject,
      status: 201,
      body: bodySchema,
      response: nodeSchema,
      async handle(ctx, { body, access: g }) {
        const r = await writeNode(s, g, { path: newPath(g, body), type, content: body.content, create: true, message: body.message });
        created(ctx, await nodeWithContent(store, r.node, true, true), `${label} node created`);
      },
    }));
  }

  routes.push(route({
    method: 'post',
    path: '/bulk-create',
    summary: 'Create many nodes (a whole tree, with temp_id and parent_temp_id) in one commit',
    permission: 'content:write',
    authorize: inBodyProject,
    status: 201,
    body: schema.bulkCreateBody,
    response: answer.bulkCreateAnswer,
    async handle(ctx, { body, access: g }) {
      for (const id of new Set([body.parent_id, ...body.nodes.map((n) => n.parent_id)])) parentFolder(store, g, id);
      const plan = store.planNodes(g.projectId, body.parent_id ?? null, body.nodes.map((n, i) => ({
        name: n.name, type: n.type, tempId: n.temp_id, parentTempId: n.parent_temp_id, parentId: n.parent_id,
        content: n.content === undefined || n.type === 'folder' ? n.content : contentForStore(n.type, n.content, `nodes.${i}.content`),
      })));
      for (const n of plan.items) s.access.requirePath(g, n.path);
      const { result, nodes } = await store.createNodes(g.projectId, g.actor, plan, { message: body.message });
      const createdIds = plan.items.flatMap((n, i) => (n.tempId === null ? [] : [{ temp_id: n.tempId, node_id: nodes[i].id }]));
      created(ctx, { nodes: nodes.map((n) => present().node(n)), created: createdIds, total: nodes.length, project_version: result.projectVersion, commit_id: result.commitId },
        `Created ${nodes.length} nodes in one commit`);
    },
  }));

  routes.push(route({
    method: 'get',
    path: '/:nodeId',
    summary: 'A node by id, with its content (json, markdown; file bytes only with include_content=true)',
    permission: 'content:read',
    authorize: nodeById,
    params: schema.nodeParams,
    query: schema.nodeQuery,
    response: nodeSchema,
    async handle(ctx, { query: q, access: { node } }) {
      ok(ctx, await nodeWithContent(store, node, q.include_content, true));
    },
  }));

  /** Rename and/or new content as ONE commit and one version (write first, so base_version is checked atomically). */
  routes.push(route({
    method: 'put',
    path: '/:nodeId',
    summary: 'New content and/or a new name, as one version',
    permission: 'content:write',
    authorize: nodeById,
    params: schema.nodeParams,
    query: schema.optionalProjectQuery,
    body: schema.updateBody,
    response: answer.updateAnswer,
    async handle(ctx, { body, access: { node, grant: g } }) {
      if (body.name !== undefined && body.name !== node.name) s.access.requirePath(g, joinPath(parentPath(node.path), body.name));
      const content = body.content === undefined || node.type === 'folder' ? body.content : contentForStore(node.type, body.content);
      const result = await store.updateNode(g.projectId, g.actor, node.id, { content, name: body.name, baseVersion: body.base_version, message: body.message });
      ok(ctx, { ...(await nodeWithContent(store, result.node, undefined, true)), changed: result.changed, project_version: result.projectVersion },
        result.changed ? 'Updated' : 'Nothing changed; no new version');
    },
  }));

  routes.push(route({
    method: 'post',
    path: '/:nodeId/move',
    summary: 'Move a node into another folder (new_parent_id, or its other name parent_id; null = the root)',
    permission: 'content:write',
    authorize: { node: ({ params }) => params.nodeId },
    params: schema.nodeParams,
    body: schema.moveBody,
    response: answer.moveAnswer,
    async handle(ctx, { body, access: { node, grant: g } }) {
      const r = await moveNodeInto(s, g, { node, folder: parentFolder(store, g, body.new_parent_id), message: body.message });
      ok(ctx, { ...present().node(r.node), old_parent_id: node.parentId, old_path: r.from, changed: r.changed }, 'Moved');
    },
  }));

  routes.push(route({
    method: 'delete',
    path: '/:nodeId',
    summary: 'Move a node to the trash',
    permission: 'content:write',
    authorize: nodeById,
    params: schema.nodeParams,
    query: schema.optionalProjectQuery,
    response: answer.deleteAnswer,
    async handle(ctx, { access: { node, grant: g } }) {
      const r = await removeNode(s, g, { target: { node } });
      const trashed = r.trashed!;
      ok(ctx, { ...present().node(trashed), trash_path: trashed.path, original_path: r.node.path, project_version: r.projectVersion }, 'Moved to the trash');
    },
  }));

  return { prefix: '/nodes', tag: 'Nodes', routes };
}
