import type { Services } from '../../app/services.ts';
import { collabCommit, previewMerge } from '../../collab/collabCommit.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { nodeFor, nodeHistoryRoutes } from '../shared/nodeHistory.ts';
import { nodeSnapshotRoutes } from '../shared/nodeSnapshots.ts';
import { nodeWithContent } from '../shared/nodeReads.ts';
import { nodePresenter } from '../shared/idPaths.ts';
import * as schema from './schemas.ts';

/**
 * Collaboration (spec 4.3): checkout gives each node's content and version, commit writes many
 * nodes as one commit, three-way merging those that moved on since the client's base; merge
 * answers that same merge for one node without writing (what a person sees before choosing). The
 * version and snapshot routes are the very declarations of their /nodes twins. Every node goes
 * through the content-access policy.
 */
export function collabRoutes(s: Services): RouteGroup {
  return {
    prefix: '/collab',
    tag: 'Collaboration',
    routes: [
      route({
        method: 'post',
        path: '/checkout',
        summary: 'The content and version of each node, as the base of a later commit',
        permission: 'content:read',
        body: schema.checkoutBody,
        response: schema.checkoutResult,
        async handle(ctx, { body }) {
          const nodes = body.node_ids.map((id) => nodeFor(s, ctx, id, 'content:read', body.project_id).node);
          const out = await Promise.all(nodes.map(async (n) => ({ ...(await nodeWithContent(s.content, n, true, true)), base_version: n.version })));
          ok(ctx, { project_id: body.project_id, nodes: out });
        },
      }),
      route({
        method: 'post',
        path: '/commit',
        summary: 'Write many nodes as one commit, merging those changed since their base version',
        permission: 'content:write',
        body: schema.commitBody,
        response: schema.commitResult,
        async handle(ctx, { body }) {
          const grant = s.access.grant(principalOf(ctx), body.project_id, 'content:write');
          const mutations = body.mutations.map((m, i) => {
            const { node } = nodeFor(s, ctx, m.node_id, 'content:write', body.project_id);
            return { nodeId: node.id, content: contentForStore(node.type, m.content, `mutations.${i}.content`), message: m.message, baseVersion: m.base_version };
          });
          const r = await collabCommit(s.content, grant.projectId, grant.actor, mutations);
          const merged = r.nodes.filter((n) => n.merged).length;
          const present = nodePresenter(s.content, 'id');
          ok(
            ctx,
            {
              changed: r.changed,
              merged: merged > 0,
              project_version: r.projectVersion,
              commit_id: r.commitId,
              nodes: r.nodes.map((n) => ({ ...present.node(n.node), base_version: n.baseVersion, merged: n.merged })),
            },
            merged ? `Committed; ${merged} node(s) merged with newer changes` : 'Committed',
          );
        },
      }),
      route({
        method: 'post',
        path: '/merge',
        summary: 'The three-way merge a commit would make of content written against base_version, without writing anything',
        permission: 'content:read',
        body: schema.mergeBody,
        response: schema.mergeResult,
        async handle(ctx, { body }) {
          const { node } = nodeFor(s, ctx, body.node_id, 'content:read', body.project_id);
          const r = await previewMerge(s.content, node.projectId, node.id, contentForStore(node.type, body.content), body.base_version);
          ok(ctx, {
            node: nodePresenter(s.content, 'id').node(r.node),
            base_version: r.baseVersion,
            current_version: r.node.version,
            clean: r.clean,
            merged: Buffer.isBuffer(r.merged) ? r.merged.toString('base64') : r.merged,
            merged_text: r.mergedText,
            conflicts: r.conflicts as Record<string, unknown>[],
          });
        },
      }),
      ...nodeHistoryRoutes(s, {
        versions: '/versions/:nodeId',
        version: '/versions/:nodeId/:version',
        rollback: '/rollback/:nodeId/:version',
        diff: '/diff/:nodeId/:v1/:v2',
      }),
      ...nodeSnapshotRoutes(s, { list: '/snapshots/:nodeId', rollback: '/rollback-snapshot/:nodeId/:snapshotId' }),
    ],
  };
}
