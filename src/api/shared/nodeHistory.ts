import type { ContentStore } from '../../content/contentStore.ts';
import { diffNodeVersions } from '../../commands/diffNodeVersions.ts';
import { listNodeVersions } from '../../commands/listNodeVersions.ts';
import { readNodeVersion } from '../../commands/readNodeVersion.ts';
import { rollbackNode } from '../../commands/rollbackNode.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { nodeRollbackSchema, presentNodeRollback } from '../../presenters/changes.ts';
import { presentNodeDiff, presentNodeVersion, presentVersionList, versionDiffSchema, versionListSchema, versionWithContentSchema } from '../../presenters/history.ts';
import * as schema from './nodeHistorySchemas.ts';

/** The node a route names by id (`project_id`, when sent, must be its project): unknown and unreachable ids are "Node not found.". */
export const nodeById = { node: ({ params }: { params: { nodeId: string } }) => params.nodeId, project: ({ query }: { query: { project_id?: string } }) => query.project_id };

/**
 * Version operations by node id, declared for `/nodes/{id}/…` and their `/collab/…` twins (the
 * paths differ, route params `nodeId`, `version`, `v1`, `v2` do not). They run the commands the
 * path surface and MCP run and answer through the same presenters, so all answer alike for the
 * same node.
 */
export function nodeHistoryRoutes(s: { content: ContentStore }, paths: { versions: string; version: string; rollback: string; diff: string }): RouteDeclaration[] {
  return [
    route({
      method: 'get',
      path: paths.versions,
      summary: "A node's versions, newest first",
      permission: 'content:read',
      authorize: nodeById,
      params: schema.nodeParams,
      query: schema.versionsQuery,
      response: versionListSchema,
      handle(ctx, { query, access: { node } }) {
        ok(ctx, presentVersionList(listNodeVersions(s, node, { limit: query.limit, sinceVersion: query.since_version })));
      },
    }),
    route({
      method: 'get',
      path: paths.version,
      summary: 'One version of a node with its complete content',
      permission: 'content:read',
      authorize: nodeById,
      params: schema.versionParams,
      query: schema.optionalProjectQuery,
      response: versionWithContentSchema,
      async handle(ctx, { params, access: { node } }) {
        ok(ctx, presentNodeVersion(await readNodeVersion(s, node, params.version)));
      },
    }),
    route({
      method: 'post',
      path: paths.rollback,
      summary: 'Roll a node back: a new version with the content of `version`',
      permission: 'content:write',
      authorize: nodeById,
      params: schema.versionParams,
      query: schema.optionalProjectQuery,
      body: schema.rollbackBody,
      response: nodeRollbackSchema,
      async handle(ctx, { params, body, access: { node, grant } }) {
        const r = await rollbackNode(s, grant, { node, version: params.version, message: body?.message });
        ok(ctx, presentNodeRollback(s.content, r), `Rolled back to version ${r.restoredVersion}`);
      },
    }),
    route({
      method: 'get',
      path: paths.diff,
      summary: 'The difference between two versions of a node (text, JSON Patch, or sizes and hashes for binary files)',
      permission: 'content:read',
      authorize: nodeById,
      params: schema.diffParams,
      query: schema.optionalProjectQuery,
      response: versionDiffSchema,
      async handle(ctx, { params, access: { node } }) {
        ok(ctx, presentNodeDiff(await diffNodeVersions(s, node, params.v1, params.v2)));
      },
    }),
  ];
}
