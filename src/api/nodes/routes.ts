import type { Context } from 'koa';
import type { z } from 'zod';
import type { Services } from '../../app/services.ts';
import type { NodeInfo } from '../../content/contentStore.ts';
import { joinPath, parentPath } from '../../content/paths.ts';
import { created, ok } from '../../http/envelope.ts';
import { conflict, notFound, validationError } from '../../http/errors.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { NodeGuard, type Caller } from './nodeAccess.ts';
import { nodesWithContent, nodeWithContent } from '../shared/nodeReads.ts';
import { nodeSchema } from '../presenters/node.ts';
import { nodePresenter } from '../shared/idPaths.ts';
import * as answer from './answers.ts';
import * as schema from './schemas.ts';

/**
 * The id-addressed node surface (spec 4.2): reads and writes by node id, as thin adapters over
 * the content store; a node written here is the node the path surface shows, same id, same
 * versions. History, snapshots and transfers have their own routers.
 */
export function nodeRoutes(s: Services): RouteGroup {
  const store = s.content;
  const guard = new NodeGuard(s);
  const present = () => nodePresenter(store, 'id');
  const routes: RouteDeclaration[] = [];

  routes.push(route({
    method: 'get',
    path: '/',
    summary: "A folder's children by parent id (the root without parent_id)",
    permission: 'content:read',
    query: schema.childrenQuery,
    response: answer.nodeList,
    async handle(ctx, { query: q }) {
      const caller = guard.project(ctx, q.project_id, 'content:read');
      let folder: NodeInfo | null = null;
      if (q.parent_id !== undefined) {
        folder = store.findById(q.parent_id);
        if (!folder || folder.projectId !== q.project_id) throw notFound('Parent folder');
        if (folder.type !== 'folder') throw validationError('parent_id is not a folder.', [{ field: 'parent_id', message: 'not a folder' }]);
      }
      // A scoped key may list the folders above its scope, but sees only the way down.
      const mode = folder ? (guard.mayRead(caller, folder) ? 'all' : guard.mayList(caller, folder.state === 'active' ? folder.path : '.trash')) : guard.mayList(caller, '');
      let children = store.listChildrenOf(q.project_id, folder?.id ?? null);
      if (mode === 'way-down') children = children.filter((n) => guard.onTheWayDown(caller, n));
      ok(ctx, { project_id: q.project_id, parent_id: folder?.id ?? null, nodes: await nodesWithContent(store, children, q.include_content), total: children.length });
    },
  }));

  routes.push(route({
    method: 'get',
    path: '/by-path',
    summary: 'A node by its path',
    permission: 'content:read',
    query: schema.byPathQuery,
    response: nodeSchema,
    async handle(ctx, { query: q }) {
      const caller = guard.project(ctx, q.project_id, 'content:read');
      const node = store.getByPath(q.project_id, q.path);
      guard.requireNode(caller, node);
      ok(ctx, await nodeWithContent(store, node, q.include_content, true));
    },
  }));

  async function byIdPath(ctx: Context, q: z.output<typeof schema.byIdPathQuery>) {
    const caller = guard.project(ctx, q.project_id, 'content:read');
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
    guard.requireNode(caller, node);
    ok(ctx, await nodeWithContent(store, node, q.include_content, true));
  }
  for (const path of ['/by-id-path', '/by-id-path/']) {
    routes.push(route({
      method: 'get',
      path,
      summary: 'A node by the ids from the root down to it, joined by "/" (its id_path)',
      permission: 'content:read',
      query: schema.byIdPathQuery,
      response: nodeSchema,
      handle: (ctx, { query }) => byIdPath(ctx, query),
    }));
  }

  routes.push(route({
    method: 'get',
    path: '/batch',
    summary: 'Many nodes by id (ids=a,b,c); the unreachable ones are listed in missing',
    permission: 'content:read',
    query: schema.batchQuery,
    response: answer.batchAnswer,
    async handle(ctx, { query: q }) {
      const callers = new Map<string, Caller | null>();
      const nodes: NodeInfo[] = [];
      const missing: { id: string; code: 'NOT_FOUND' | 'FORBIDDEN' }[] = [];
      for (const id of q.ids) {
        const node = store.findById(id);
        if (!node || (q.project_id !== undefined && node.projectId !== q.project_id)) {
          missing.push({ id, code: 'NOT_FOUND' });
          continue;
        }
        if (!callers.has(node.projectId)) callers.set(node.projectId, tryCaller(ctx, node.projectId));
        const caller = callers.get(node.projectId)!;
        if (!caller) missing.push({ id, code: 'NOT_FOUND' });
        else if (!guard.mayRead(caller, node)) missing.push({ id, code: 'FORBIDDEN' });
        else nodes.push(node);
      }
      ok(ctx, { nodes: await nodesWithContent(store, nodes, q.include_content), missing, total: nodes.length });
    },
  }));

  /** Batch reads report projects the caller cannot reach as not found instead of failing. */
  function tryCaller(ctx: Context, projectId: string): Caller | null {
    try {
      return guard.project(ctx, projectId, 'content:read');
    } catch {
      return null;
    }
  }

  routes.push(route({
    method: 'post',
    path: '/folder',
    summary: 'Create a folder (409 when the path exists)',
    permission: 'content:write',
    status: 201,
    body: schema.folderBody,
    response: nodeSchema,
    async handle(ctx, { body }) {
      const { caller, path } = target(ctx, body);
      const result = await store.createFolder(caller.projectId, caller.actor, path, { message: body.message });
      created(ctx, present().node(result.node), 'Folder created');
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
      status: 201,
      body: bodySchema,
      response: nodeSchema,
      async handle(ctx, { body }) {
        const { caller, path } = target(ctx, body);
        const result = await store.write(caller.projectId, caller.actor, { path, type, content: body.content, baseVersion: 0, message: body.message });
        created(ctx, await nodeWithContent(store, result.node, true, true), `${label} node created`);
      },
    }));
  }

  /** The project, parent folder and path of a node about to be created. */
  function target(ctx: Context, body: { project_id: string; parent_id?: string | null; name: string }) {
    const caller = guard.project(ctx, body.project_id, 'content:write');
    const parent = guard.parent(caller, body.parent_id);
    const path = joinPath(parent.path, body.name);
    guard.requirePath(caller, path);
    return { caller, parent, path };
  }

  routes.push(route({
    method: 'post',
    path: '/bulk-create',
    summary: 'Create many nodes (a whole tree, with temp_id and parent_temp_id) in one commit',
    permission: 'content:write',
    status: 201,
    body: schema.bulkCreateBody,
    response: answer.bulkCreateAnswer,
    async handle(ctx, { body }) {
      const caller = guard.project(ctx, body.project_id, 'content:write');
      for (const id of new Set([body.parent_id, ...body.nodes.map((n) => n.parent_id)])) guard.parent(caller, id);
      const plan = store.planNodes(caller.projectId, body.parent_id ?? null, body.nodes.map((n, i) => ({
        name: n.name, type: n.type, tempId: n.temp_id, parentTempId: n.parent_temp_id, parentId: n.parent_id,
        content: n.content === undefined || n.type === 'folder' ? n.content : contentForStore(n.type, n.content, `nodes.${i}.content`),
      })));
      for (const n of plan.items) guard.requirePath(caller, n.path);
      const { result, nodes } = await store.createNodes(caller.projectId, caller.actor, plan, { message: body.message });
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
    params: schema.nodeParams,
    query: schema.nodeQuery,
    response: nodeSchema,
    async handle(ctx, { params: { nodeId }, query: q }) {
      const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
      ok(ctx, await nodeWithContent(store, node, q.include_content, true));
    },
  }));

  /** Rename and/or new content as ONE commit and one version (write first, so base_version is checked atomically). */
  routes.push(route({
    method: 'put',
    path: '/:nodeId',
    summary: 'New content and/or a new name, as one version',
    permission: 'content:write',
    params: schema.nodeParams,
    query: schema.optionalProjectQuery,
    body: schema.updateBody,
    response: answer.updateAnswer,
    async handle(ctx, { params: { nodeId }, query: q, body }) {
      const { node, caller } = guard.node(ctx, nodeId, 'content:write', q.project_id);
      if (body.name !== undefined && body.name !== node.name) guard.requirePath(caller, joinPath(parentPath(node.path), body.name));
      const content = body.content === undefined || node.type === 'folder' ? body.content : contentForStore(node.type, body.content);
      const result = await store.updateNode(caller.projectId, caller.actor, node.id, { content, name: body.name, baseVersion: body.base_version, message: body.message });
      ok(ctx, { ...(await nodeWithContent(store, result.node, undefined, true)), changed: result.changed, project_version: result.projectVersion },
        result.changed ? 'Updated' : 'Nothing changed; no new version');
    },
  }));

  routes.push(route({
    method: 'post',
    path: '/:nodeId/move',
    summary: 'Move a node into another folder (new_parent_id, or its other name parent_id; null = the root)',
    permission: 'content:write',
    params: schema.nodeParams,
    body: schema.moveBody,
    response: answer.moveAnswer,
    async handle(ctx, { params: { nodeId }, body }) {
      const { node, caller } = guard.node(ctx, nodeId, 'content:write');
      const parent = guard.parent(caller, body.new_parent_id);
      guard.requirePath(caller, joinPath(parent.path, node.name));
      const result = await store.moveNode(caller.projectId, caller.actor, node.id, parent.id, { message: body.message });
      ok(ctx, { ...present().node(result.node), old_parent_id: node.parentId, old_path: node.path, changed: result.changed }, 'Moved');
    },
  }));

  routes.push(route({
    method: 'delete',
    path: '/:nodeId',
    summary: 'Move a node to the trash',
    permission: 'content:write',
    params: schema.nodeParams,
    query: schema.optionalProjectQuery,
    response: answer.deleteAnswer,
    async handle(ctx, { params: { nodeId }, query: q }) {
      const { node, caller } = guard.node(ctx, nodeId, 'content:write', q.project_id);
      if (node.state !== 'active') throw conflict('The node is already in the trash.', { id: node.id });
      const result = await store.remove(caller.projectId, caller.actor, node.path);
      const trashed = result.nodes.find((n) => n.id === node.id) ?? store.getById(caller.projectId, node.id);
      ok(ctx, { ...present().node(trashed), trash_path: trashed.path, original_path: node.path, project_version: result.projectVersion }, 'Moved to the trash');
    },
  }));

  return { prefix: '/nodes', tag: 'Nodes', routes };
}
