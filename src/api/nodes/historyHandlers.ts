import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { parseInput } from '../../http/validate.ts';
import { rollbackNodeTo, versionDiffOf, versionListOf, versionWithContent } from '../content/history.ts';
import { NodeGuard } from './nodeAccess.ts';
import * as schema from './schemas.ts';

/**
 * Version operations by node id. The same handlers serve `/nodes/{id}/…` and their `/collab/…`
 * twins (route params `nodeId`, `version`, `v1`, `v2`), and they share their bodies with the path
 * surface (content/history.ts), so all three answer alike for the same node.
 */
export function historyHandlers(s: Services) {
  const guard = new NodeGuard(s);
  const store = s.content;
  return {
    versions(ctx: Context) {
      const { nodeId } = parseInput(schema.nodeParams, ctx.params, 'params');
      const q = parseInput(schema.versionsQuery, ctx.query, 'query');
      const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
      ok(ctx, versionListOf(store, node, { limit: q.limit, sinceVersion: q.since_version }));
    },
    async version(ctx: Context) {
      const { nodeId, version } = parseInput(schema.versionParams, ctx.params, 'params');
      const q = parseInput(schema.optionalProjectQuery, ctx.query, 'query');
      const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
      ok(ctx, await versionWithContent(store, node, version));
    },
    async rollback(ctx: Context) {
      const { nodeId, version } = parseInput(schema.versionParams, ctx.params, 'params');
      const q = parseInput(schema.optionalProjectQuery, ctx.query, 'query');
      const body = parseInput(schema.rollbackBody, ctx.request.body, 'body');
      const { node, caller } = guard.node(ctx, nodeId, 'content:write', q.project_id);
      const r = await rollbackNodeTo(store, node, caller.actor, version, body?.message);
      ok(ctx, r.data, r.message);
    },
    async diff(ctx: Context) {
      const { nodeId, v1, v2 } = parseInput(schema.diffParams, ctx.params, 'params');
      const q = parseInput(schema.optionalProjectQuery, ctx.query, 'query');
      const { node } = guard.node(ctx, nodeId, 'content:read', q.project_id);
      ok(ctx, await versionDiffOf(store, node, v1, v2));
    },
  };
}
