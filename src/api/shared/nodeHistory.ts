import type { Context } from 'koa';
import type { z } from 'zod';
import type { Services } from '../../app/services.ts';
import type { NodeInfo } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import type { ContentAction, ContentGrant } from '../../policies/contentAccess.ts';
import { rollbackNodeTo, versionDiffOf, versionListOf, versionWithContent } from './history.ts';
import * as schema from './nodeHistorySchemas.ts';

/** The node `nodeId` for `action`, through the content-access policy (unknown and unreachable ids are 404). */
export function nodeFor(s: Services, ctx: Context, nodeId: string, action: ContentAction, projectId?: string): { node: NodeInfo; grant: ContentGrant } {
  const node = s.content.findById(nodeId);
  const grant = s.access.node(principalOf(ctx), node, action, projectId);
  return { node: node!, grant };
}

/**
 * Version operations by node id, declared for `/nodes/{id}/…` and their `/collab/…` twins (the
 * paths differ, route params `nodeId`, `version`, `v1`, `v2` do not). Their bodies are shared
 * with the path surface (history.ts), so all three answer alike for the same node.
 */
export function nodeHistoryRoutes(s: Services, paths: { versions: string; version: string; rollback: string; diff: string }): RouteDeclaration[] {
  const store = s.content;
  /** A read of one node's history: the node as the caller may read it, then `answer`. */
  const nodeRead = <P extends z.ZodType<{ nodeId: string }>, Q extends z.ZodType<{ project_id?: string }>>(
    d: { path: string; summary: string; params: P; query: Q; response: z.ZodType },
    answer: (node: NodeInfo, input: { params: z.output<P>; query: z.output<Q> }) => unknown,
  ) =>
    route({
      method: 'get',
      ...d,
      permission: 'content:read',
      async handle(ctx, input) {
        const { node } = nodeFor(s, ctx, input.params.nodeId, 'content:read', input.query.project_id);
        ok(ctx, await answer(node, input));
      },
    });
  return [
    nodeRead(
      { path: paths.versions, summary: "A node's versions, newest first", params: schema.nodeParams, query: schema.versionsQuery, response: schema.versionList },
      (node, { query }) => versionListOf(store, node, { limit: query.limit, sinceVersion: query.since_version }),
    ),
    nodeRead(
      {
        path: paths.version,
        summary: 'One version of a node with its complete content',
        params: schema.versionParams,
        query: schema.optionalProjectQuery,
        response: schema.versionWithContentSchema,
      },
      (node, { params }) => versionWithContent(store, node, params.version),
    ),
    route({
      method: 'post',
      path: paths.rollback,
      summary: 'Roll a node back: a new version with the content of `version`',
      permission: 'content:write',
      params: schema.versionParams,
      query: schema.optionalProjectQuery,
      body: schema.rollbackBody,
      response: schema.nodeRollback,
      async handle(ctx, { params, query, body }) {
        const { node, grant } = nodeFor(s, ctx, params.nodeId, 'content:write', query.project_id);
        const r = await rollbackNodeTo(store, node, grant.actor, params.version, body?.message);
        ok(ctx, r.data, r.message);
      },
    }),
    nodeRead(
      {
        path: paths.diff,
        summary: 'The difference between two versions of a node (text, JSON Patch, or sizes and hashes for binary files)',
        params: schema.diffParams,
        query: schema.optionalProjectQuery,
        response: schema.versionDiff,
      },
      (node, { params }) => versionDiffOf(store, node, params.v1, params.v2),
    ),
  ];
}
