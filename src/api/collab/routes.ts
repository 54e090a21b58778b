import { collabCommit, previewMerge } from '../../collab/collabCommit.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess, ContentAction, ContentGrant } from '../../policies/contentAccess.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { nodeHistoryRoutes } from '../shared/nodeHistory.ts';
import { nodeSnapshotRoutes } from '../shared/nodeSnapshots.ts';
import { nodeWithContent } from '../shared/nodeReads.ts';
import * as schema from './schemas.ts';

/**
 * Collaboration (spec 4.3): checkout gives each node's content and version, commit writes many
 * nodes as one commit, three-way merging those that moved on since the client's base; merge
 * answers that same merge for one node without writing (what a person sees before choosing). The
 * version and snapshot routes are the very declarations of their /nodes twins. Every node goes
 * through the content-access policy.
 */
export function collabRoutes(s: { content: ContentStore; access: ContentAccess }): RouteGroup {
  /** Each node a body names, through the policy: unknown, unreachable and other projects' nodes are "Node not found.". */
  const nodeIn = (g: ContentGrant, id: string, action: ContentAction) => {
    const node = s.content.findById(id);
    s.access.node(g.principal, node, action, g.projectId);
    return node!;
  };
  return {
    prefix: '/collab',
    tag: 'Collaboration',
    routes: [
      route({
        method: 'post',
        path: '/checkout',
        summary: 'The content and version of each node, as the base of a later commit',
        permission: 'content:read',
        authorize: { content: ({ body }) => body.project_id },
        body: schema.checkoutBody,
        response: schema.checkoutResult,
        async handle(ctx, { body, access }) {
          const nodes = body.node_ids.map((id) => nodeIn(access, id, 'content:read'));
          const out = await Promise.all(nodes.map(async (n) => ({ ...(await nodeWithContent(s.content, n, true, true)), base_version: n.version })));
          ok(ctx, { project_id: body.project_id, nodes: out });
        },
      }),
      route({
        method: 'post',
        path: '/commit',
        summary: 'Write many nodes as one commit, merging those changed since their base version',
        permission: 'content:write',
        authorize: { content: ({ body }) => body.project_id },
        body: schema.commitBody,
        response: schema.commitResult,
        async handle(ctx, { body, access: grant }) {
          const mutations = body.mutations.map((m, i) => {
            const node = nodeIn(grant, m.node_id, 'content:write');
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
        authorize: { node: ({ body }) => body.node_id, project: ({ body }) => body.project_id },
        body: schema.mergeBody,
        response: schema.mergeResult,
        async handle(ctx, { body, access: { node } }) {
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
