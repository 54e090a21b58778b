import { z } from 'zod';
import { itemsSchema, withItems } from '../../presenters/items.ts';
import type { Principal } from '../../auth/principal.ts';
import type { NodeInfo } from '../../content/types.ts';
import type { Page, Paged } from '../../domain/pagination.ts';
import { created, ok } from '../../http/envelope.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { onConnection } from './connectionResource.ts';

const id = z.string().min(1).max(100);
export const endpointName = z.string().trim().min(1, 'must not be empty').max(200);
export const endpointParams = z.object({ endpoint_id: id });
export const nodeParams = z.object({ node_id: id });
export const listEndpointsQuery = paginationQuery.extend({ project_id: id });
export const endpointId = id;

/** The fields every node-bound endpoint is created with; a kind extends it with its own settings. */
export function createBodyBase(modeDescription: string, folder: string) {
  return z.object({ name: endpointName, project_id: id, node_id: id.describe(folder), mode: modeSchema(modeDescription).optional() });
}

export const endpointMode = z.enum(['read', 'read_write']);
const modeSchema = (description: string) => endpointMode.describe(description);

/** The fields every node-bound endpoint may change; a kind extends it with its own settings. */
export function updateBodyBase(modeDescription: string) {
  return z.object({
    name: endpointName.optional(),
    node_id: id.optional(),
    mode: modeSchema(modeDescription).optional(),
    status: z.enum(['active', 'paused', 'revoked']).optional().describe('paused: refused with 403 until resumed; revoked is final'),
  });
}

/** The domain's input from a create body (the kind's own settings added by the caller). */
export const endpointInput = (b: { project_id: string; node_id: string; name: string; mode?: 'read' | 'read_write' }) => ({
  projectId: b.project_id,
  nodeId: b.node_id,
  name: b.name,
  mode: b.mode,
});

/** The domain's changes from an update body (the kind's own settings added by the caller). */
export const endpointChanges = (b: { name?: string; node_id?: string; mode?: 'read' | 'read_write'; status?: 'active' | 'paused' | 'revoked' }) => ({
  name: b.name,
  nodeId: b.node_id,
  mode: b.mode,
  status: b.status,
});

/** What every node-bound endpoint kind (sandbox, MCP) offers its routes; the routes check first. */
export interface NodeBoundService<E> {
  find(id: string): Promise<E | null>;
  list(projectId: string, page: Page): Promise<Paged<E>>;
  byNode(nodeId: string): Promise<E[]>;
  delete(endpoint: E): Promise<void>;
  regenerateKey(endpoint: E): Promise<{ endpoint: E; key: string }>;
}

export interface NodeBoundRouteOptions<E, C, U> {
  /** `sandbox endpoint`, `MCP endpoint`: how summaries and messages name one. */
  noun: string;
  /** The key of the list in list answers (`sandbox_endpoints`). */
  listKey: string;
  service: () => NodeBoundService<E>;
  /** A node by id: the by-node route checks the node's project. */
  findNode: (id: string) => NodeInfo | null;
  /** An endpoint as answered (it may look up what the endpoint names: an MCP endpoint's bound tools). */
  present: (e: E) => unknown;
  /** A created or re-keyed endpoint with its key, as answered (the key is shown only then). */
  withKey: (issued: { endpoint: E; key: string }) => unknown;
  schemas: { endpoint: z.ZodType; withKey: z.ZodType; create: z.ZodType<C>; update: z.ZodType<U> };
  /** Creates one on the folder of the body, which the caller must reach (`principal`). */
  create: (principal: Principal, body: C) => { endpoint: E; key: string } | Promise<{ endpoint: E; key: string }>;
  /** Changes one; a new folder must be one the caller reaches (`principal`). */
  update: (principal: Principal, endpoint: E, body: U) => E | Promise<E>;
  /** Extra words of a summary or description, by route. */
  words?: { create?: string; get?: string; update?: string; updateDescription?: string; delete?: string; regenerate?: string };
}

/**
 * The management routes of an endpoint bound to a folder (a connection with its own key):
 * list, create, by-node, read, update, delete, regenerate-key. Each needs keys:manage on the
 * project: the one named, the node's, or the endpoint's (one the caller cannot manage is
 * "<Noun> not found.").
 */
export function nodeBoundRoutes<E extends { connection: { project_id: string } }, C extends { project_id: string }, U>(o: NodeBoundRouteOptions<E, C, U>): RouteDeclaration[] {
  const permission = 'keys:manage';
  const { noun, listKey } = o;
  const Noun = noun[0]!.toUpperCase() + noun.slice(1);
  const list = z.object({ [listKey]: z.array(o.schemas.endpoint), items: itemsSchema(o.schemas.endpoint, listKey), total: z.number().int() });
  const endpoint = { resource: ({ params }: { params: { endpoint_id: string } }) => onConnection(o.service().find(params.endpoint_id)), name: Noun };
  return [
    route({
      method: 'get',
      path: '/',
      summary: `List a project's ${noun}s`,
      permission,
      authorize: { project: ({ query }) => query.project_id },
      query: listEndpointsQuery,
      response: list.extend({ limit: z.number().int(), offset: z.number().int() }),
      async handle(ctx, { query }) {
        const { items, total } = await o.service().list(query.project_id, query);
        ok(ctx, { ...withItems(listKey, await Promise.all(items.map(o.present))), ...pageInfo(total, query) });
      },
    }),
    route({
      method: 'post',
      path: '/',
      summary: `Create ${o.words?.create ?? `a ${noun} on a folder; its key is shown once`}`,
      permission,
      authorize: { project: ({ body }) => body.project_id },
      status: 201,
      body: o.schemas.create,
      response: o.schemas.withKey,
      async handle(ctx, { body, access }) {
        created(ctx, await o.withKey(await o.create(access.principal, body)), `${Noun} created; the key is shown only this once`);
      },
    }),
    route({
      method: 'get',
      path: '/by-node/:node_id',
      summary: `The ${noun}s bound to a folder`,
      permission,
      // Unknown nodes and nodes of projects the caller cannot manage are "Node not found.".
      authorize: { resource: ({ params }) => o.findNode(params.node_id), name: 'Node' },
      params: nodeParams,
      response: list,
      async handle(ctx, { params }) {
        const found = await o.service().byNode(params.node_id);
        ok(ctx, { ...withItems(listKey, await Promise.all(found.map(o.present))), total: found.length });
      },
    }),
    route({
      method: 'get',
      path: '/:endpoint_id',
      summary: `Read ${o.words?.get ?? `a ${noun}`}`,
      permission,
      authorize: endpoint,
      params: endpointParams,
      response: o.schemas.endpoint,
      async handle(ctx, { access }) {
        ok(ctx, await o.present(access.record));
      },
    }),
    route({
      method: 'put',
      path: '/:endpoint_id',
      summary: `Change ${o.words?.update ?? `a ${noun}`}`,
      description: o.words?.updateDescription,
      permission,
      authorize: endpoint,
      params: endpointParams,
      body: o.schemas.update,
      response: o.schemas.endpoint,
      async handle(ctx, { body, access }) {
        ok(ctx, await o.present(await o.update(access.principal, access.record, body)), `${Noun} updated`);
      },
    }),
    route({
      method: 'delete',
      path: '/:endpoint_id',
      summary: `Delete a ${noun}; ${o.words?.delete ?? 'its key stops working'}`,
      permission,
      authorize: endpoint,
      params: endpointParams,
      response: deletedSchema,
      async handle(ctx, { params, access }) {
        await o.service().delete(access.record);
        ok(ctx, presentDeleted(params.endpoint_id), `${Noun} deleted; its key no longer works`);
      },
    }),
    route({
      method: 'post',
      path: '/:endpoint_id/regenerate-key',
      summary: `Issue a new key; ${o.words?.regenerate ?? 'the previous one stops working'}`,
      permission,
      authorize: endpoint,
      params: endpointParams,
      response: o.schemas.withKey,
      async handle(ctx, { access }) {
        ok(ctx, await o.withKey(await o.service().regenerateKey(access.record)), 'New key issued; the previous key no longer works');
      },
    }),
  ];
}
