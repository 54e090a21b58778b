import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { collabCommit } from '../../collab/collabCommit.ts';
import { ok } from '../../http/envelope.ts';
import { parseInput } from '../../http/validate.ts';
import { contentForStore } from '../content/fileContent.ts';
import { historyHandlers } from '../nodes/historyHandlers.ts';
import { NodeGuard } from '../nodes/nodeAccess.ts';
import { nodeWithContent } from '../nodes/nodeReads.ts';
import { presentNode } from '../nodes/presenter.ts';
import { snapshotHandlers } from '../nodes/snapshotHandlers.ts';
import * as schema from './schemas.ts';

/**
 * Collaboration (spec 4.3): checkout gives each node's content and version, commit writes many
 * nodes as one commit, three-way merging those that moved on since the client's base. The
 * version and snapshot routes are the very handlers of their /nodes twins.
 */
export function collabRoutes(s: Services): Router {
  const router = new Router({ prefix: '/collab' });
  const guard = new NodeGuard(s);

  router.post('/checkout', async (ctx) => {
    const body = parseInput(schema.checkoutBody, ctx.request.body, 'body');
    const nodes = body.node_ids.map((id) => guard.node(ctx, id, 'content:read', body.project_id).node);
    const out = await Promise.all(nodes.map(async (n) => ({ ...(await nodeWithContent(s.content, n, true, true)), base_version: n.version })));
    ok(ctx, { project_id: body.project_id, nodes: out });
  });

  router.post('/commit', async (ctx) => {
    const body = parseInput(schema.commitBody, ctx.request.body, 'body');
    const caller = guard.project(ctx, body.project_id, 'content:write');
    const mutations = body.mutations.map((m, i) => {
      const { node } = guard.node(ctx, m.node_id, 'content:write', body.project_id);
      return { nodeId: node.id, content: contentForStore(node.type, m.content, `mutations.${i}.content`), message: m.message, baseVersion: m.base_version };
    });
    const r = await collabCommit(s.content, caller.projectId, caller.actor, mutations);
    const merged = r.nodes.filter((n) => n.merged).length;
    ok(
      ctx,
      {
        changed: r.changed,
        merged: merged > 0,
        project_version: r.projectVersion,
        commit_id: r.commitId,
        nodes: r.nodes.map((n) => ({ ...presentNode(n.node), base_version: n.baseVersion, merged: n.merged })),
      },
      merged ? `Committed; ${merged} node(s) merged with newer changes` : 'Committed',
    );
  });

  const h = historyHandlers(s);
  router.get('/versions/:nodeId', h.versions);
  router.get('/versions/:nodeId/:version', h.version);
  router.post('/rollback/:nodeId/:version', h.rollback);
  router.get('/diff/:nodeId/:v1/:v2', h.diff);
  const snap = snapshotHandlers(s);
  router.get('/snapshots/:nodeId', snap.list);
  router.post('/rollback-snapshot/:nodeId/:snapshotId', snap.rollback);
  return router;
}
