import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import type { Mutation, NodeInfo } from '../../content/contentStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { conflict, notFound, validationError } from '../../http/errors.ts';
import { parseInput } from '../../http/validate.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { NodeGuard, type Caller } from './nodeAccess.ts';
import { nodesWithContent, nodeWithContent } from '../shared/nodeReads.ts';
import { presentNode } from '../presenters/node.ts';
import * as schema from './schemas.ts';

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);

/**
 * The id-addressed node surface (spec 4.2): reads and writes by node id, as thin adapters over
 * the content store; a node written here is the node the path surface shows, same id, same
 * versions. History, snapshots and transfers have their own routers.
 */
export function nodeRoutes(s: Services): Router {
  const router = new Router({ prefix: '/nodes' });
  const store = s.content;
  const guard = new NodeGuard(s);

  router.get('/', async (ctx) => {
    const q = parseInput(schema.childrenQuery, ctx.query, 'query');
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
  });

  router.get('/by-path', async (ctx) => {
    const q = parseInput(schema.byPathQuery, ctx.query, 'query');
    const caller = guard.project(ctx, q.project_id, 'content:read');
    const node = store.getByPath(q.project_id, q.path);
    guard.requireNode(caller, node);
    ok(ctx, await nodeWithContent(store, node, q.include_content, true));
  });

  async function byIdPath(ctx: Context) {
    const q = parseInput(schema.byIdPathQuery, ctx.query, 'query');
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
  router.get('/by-id-path', byIdPath);
  router.get('/by-id-path/', byIdPath);

  router.get('/batch', async (ctx) => {
    const q = parseInput(schema.batchQuery, ctx.query, 'query');
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
  });

  /** Batch reads report projects the caller cannot reach as not found instead of failing. */
  function tryCaller(ctx: Context, projectId: string): Caller | null {
    try {
      return guard.project(ctx, projectId, 'content:read');
    } catch {
      return null;
    }
  }

  router.post('/folder', async (ctx) => {
    const body = parseInput(schema.folderBody, ctx.request.body, 'body');
    const { caller, path } = target(ctx, body);
    if (store.findByPath(caller.projectId, path)) throw conflict(`${path} already exists.`, { path });
    const result = await store.mkdir(caller.projectId, caller.actor, path, { message: body.message });
    created(ctx, presentNode(result.node), 'Folder created');
  });

  router.post('/json', async (ctx) => {
    const body = parseInput(schema.jsonBody, ctx.request.body, 'body');
    const { caller, path } = target(ctx, body);
    const result = await store.write(caller.projectId, caller.actor, { path, type: 'json', content: body.content, baseVersion: 0, message: body.message });
    created(ctx, await nodeWithContent(store, result.node, true, true), 'JSON node created');
  });

  router.post('/markdown', async (ctx) => {
    const body = parseInput(schema.markdownBody, ctx.request.body, 'body');
    const { caller, path } = target(ctx, body);
    const result = await store.write(caller.projectId, caller.actor, { path, type: 'markdown', content: body.content, baseVersion: 0, message: body.message });
    created(ctx, await nodeWithContent(store, result.node, true, true), 'Markdown node created');
  });

  /** The project, parent folder and path of a node about to be created. */
  function target(ctx: Context, body: { project_id: string; parent_id?: string | null; name: string }) {
    const caller = guard.project(ctx, body.project_id, 'content:write');
    const parent = guard.parent(caller, body.parent_id);
    const path = join(parent.path, body.name);
    guard.requirePath(caller, path);
    return { caller, parent, path };
  }

  router.post('/bulk-create', async (ctx) => {
    const body = parseInput(schema.bulkCreateBody, ctx.request.body, 'body');
    const caller = guard.project(ctx, body.project_id, 'content:write');
    const parent = guard.parent(caller, body.parent_id);
    const seen = new Set<string>();
    const mutations: Mutation[] = body.nodes.map((n, i) => {
      const path = join(parent.path, n.name);
      guard.requirePath(caller, path);
      if (seen.has(n.name)) throw validationError(`nodes.${i}.name repeats "${n.name}".`, [{ field: `nodes.${i}.name`, message: 'duplicate name' }]);
      seen.add(n.name);
      if (n.type === 'folder') {
        if (store.findByPath(caller.projectId, path)) throw conflict(`${path} already exists.`, { path, index: i });
        return { op: 'mkdir', path };
      }
      if (n.content === undefined) throw validationError(`nodes.${i}.content is required.`, [{ field: `nodes.${i}.content`, message: 'required' }]);
      return { op: 'write', path, type: n.type, content: contentForStore(n.type, n.content, `nodes.${i}.content`), baseVersion: 0 };
    });
    const result = await store.commit(caller.projectId, caller.actor, mutations, { message: body.message ?? `create ${body.nodes.length} nodes` });
    const byPath = new Map(result.nodes.map((n) => [n.path, n]));
    const nodes = body.nodes.map((n) => byPath.get(join(parent.path, n.name)) ?? store.getByPath(caller.projectId, join(parent.path, n.name)));
    created(ctx, { nodes: nodes.map((n) => presentNode(n)), total: nodes.length, project_version: result.projectVersion, commit_id: result.commitId },
      `Created ${nodes.length} nodes in one commit`);
  });

  router.get('/:nodeId', async (ctx) => {
    const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
    const q = parseInput(schema.nodeQuery, ctx.query, 'query');
    const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
    ok(ctx, await nodeWithContent(store, node, q.include_content, true));
  });

  /** Rename and/or new content as ONE commit and one version (write first, so base_version is checked atomically). */
  router.put('/:nodeId', async (ctx) => {
    const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
    const q = parseInput(schema.optionalProjectQuery, ctx.query, 'query');
    const body = parseInput(schema.updateBody, ctx.request.body, 'body');
    const { node, caller } = guard.node(ctx, nodeId, 'content:write', q.project_id);
    if (node.state !== 'active') throw conflict('The node is in the trash; restore it first.', { id: node.id });
    const mutations: Mutation[] = [];
    if (body.content !== undefined) {
      if (node.type === 'folder') throw validationError('Folders have no content.', [{ field: 'content', message: 'not allowed for folders' }]);
      const write: Mutation = { op: 'write', path: node.path, type: node.type, content: contentForStore(node.type, body.content) };
      if (body.base_version !== undefined) write.baseVersion = body.base_version;
      mutations.push(write);
    }
    let path = node.path;
    if (body.name !== undefined && body.name !== node.name) {
      path = join(node.path.slice(0, Math.max(0, node.path.lastIndexOf('/'))), body.name);
      guard.requirePath(caller, path);
      mutations.push({ op: 'move', from: node.path, to: path });
    }
    // Content and a new name are one change of one node, recorded as an update (with its old
    // path); the default message says both rather than "2 changes".
    const described = body.content !== undefined && path !== node.path ? `update ${path} (renamed from ${node.path})` : undefined;
    const result = mutations.length
      ? await store.commit(caller.projectId, caller.actor, mutations, { message: body.message ?? described })
      : { changed: false, projectVersion: null };
    const updated = store.getById(caller.projectId, node.id);
    ok(ctx, { ...(await nodeWithContent(store, updated, undefined, true)), changed: result.changed, project_version: result.projectVersion },
      result.changed ? 'Updated' : 'Nothing changed; no new version');
  });

  router.post('/:nodeId/move', async (ctx) => {
    const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
    const body = parseInput(schema.moveBody, ctx.request.body, 'body');
    const { node, caller } = guard.node(ctx, nodeId, 'content:write');
    if (node.state !== 'active') throw conflict('The node is in the trash; restore it first.', { id: node.id });
    const parent = guard.parent(caller, body.new_parent_id);
    if (parent.id !== null && (parent.path === node.path || parent.path.startsWith(node.path + '/'))) {
      throw validationError('A folder cannot be moved into itself or one of its descendants.', [{ field: 'new_parent_id', message: 'inside the moved folder' }]);
    }
    const to = join(parent.path, node.name);
    guard.requirePath(caller, to);
    const result = await store.move(caller.projectId, caller.actor, node.path, to, { message: body.message });
    ok(ctx, { ...presentNode(result.node), old_parent_id: node.parentId, old_path: node.path, changed: result.changed }, 'Moved');
  });

  router.delete('/:nodeId', async (ctx) => {
    const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
    const q = parseInput(schema.optionalProjectQuery, ctx.query, 'query');
    const { node, caller } = guard.node(ctx, nodeId, 'content:write', q.project_id);
    if (node.state !== 'active') throw conflict('The node is already in the trash.', { id: node.id });
    const result = await store.remove(caller.projectId, caller.actor, node.path);
    const trashed = result.nodes.find((n) => n.id === node.id) ?? store.getById(caller.projectId, node.id);
    ok(ctx, { ...presentNode(trashed), trash_path: trashed.path, original_path: node.path, project_version: result.projectVersion }, 'Moved to the trash');
  });

  return router;
}
