import { collabCommit, previewMerge, type CollabMutation } from '../../collab/collabCommit.ts';
import { z } from 'zod';
import { listProjectCommitsSince } from '../../commands/listProjectCommits.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import type { Changelog } from '../../events/changelog.ts';
import { validationError } from '../../http/errors.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess, ContentAction, ContentGrant } from '../../policies/contentAccess.ts';
import { presentPuppyOneProjectHistory, puppyOneProjectHistorySchema } from '../../presenters/history.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { contentForStore } from '../shared/fileContent.ts';
import { nodeHistoryRoutes } from '../shared/nodeHistory.ts';
import { nodeSnapshotRoutes } from '../shared/nodeSnapshots.ts';
import { nodeWithContent } from '../shared/nodeReads.ts';
import * as schema from './schemas.ts';

type Presented = Record<string, unknown> & { id: string; type: NodeInfo['type']; version: number; content_hash: string | null };

/** A checked-out node as PuppyOne's working copy. */
function workingCopy(n: Presented) {
  return {
    node_id: n.id,
    node_type: n.type,
    base_version: n.version,
    content: n.type === 'file' ? (n.content_base64 ?? null) : (n.content ?? null),
    content_json: n.type === 'json' ? n.content : null,
    content_hash: n.content_hash,
  };
}

function presentedContent(type: NodeInfo['type'], bytes: Buffer): unknown {
  if (type === 'json') return JSON.parse(bytes.toString('utf8'));
  if (type === 'markdown') return bytes.toString('utf8');
  return bytes.toString('base64');
}

/**
 * Collaboration (spec 4.3): checkout gives each node's content and version, commit writes many
 * nodes as one commit, three-way merging those that moved on since the client's base; merge
 * answers that same merge for one node without writing (what a person sees before choosing). The
 * version and snapshot routes are the very declarations of their /nodes twins. Every node goes
 * through the content-access policy.
 */
export function collabRoutes(s: { content: ContentStore; access: ContentAccess; changelog: Changelog }): RouteGroup {
  /** Each node a body names, through the policy: unknown, unreachable and other projects' nodes are "Node not found.". */
  const nodeIn = async (g: ContentGrant, id: string, action: ContentAction) => {
    const node = s.content.findById(id);
    await s.access.node(g.principal, node, action, g.projectId);
    return node!;
  };
  /** The project of the node a PuppyOne request names first ('' when unknown: the content door answers 404). */
  const projectOfNode = (id: string) => s.content.findById(id)?.projectId ?? '';
  return {
    prefix: '/collab',
    tag: 'Collaboration',
    routes: [
      route({
        method: 'post',
        path: '/checkout',
        summary: 'The content and version of each node, as the base of a later commit',
        permission: 'content:read',
        description: 'Without project_id the nodes are taken in the project of the first one and the answer is a list of working copies (PuppyOne\'s shape).',
        authorize: { content: ({ body }) => body.project_id ?? projectOfNode(body.node_ids[0]!) },
        body: schema.checkoutBody,
        response: schema.checkoutResult,
        async handle(ctx, { body, access }) {
          const nodes: NodeInfo[] = [];
          for (const id of body.node_ids) nodes.push(await nodeIn(access, id, 'content:read'));
          const out = await Promise.all(nodes.map(async (n) => ({ ...(await nodeWithContent(s.content, n, true, true)), base_version: n.version })));
          if (body.project_id !== undefined) ok(ctx, { project_id: body.project_id, nodes: out });
          else ok(ctx, out.map(workingCopy));
        },
      }),
      route({
        method: 'post',
        path: '/commit',
        summary: 'Write many nodes as one commit, merging those changed since their base version',
        permission: 'content:write',
        description: 'PuppyOne\'s one-node form `{node_id, content, base_version, node_type?}` is committed in the node\'s project and answers `{node_id, status, version}`.',
        authorize: { content: ({ body }) => body.project_id ?? projectOfNode(body.mutations[0]!.node_id) },
        body: schema.commitBody,
        response: z.union([schema.commitResult, schema.singleCommitResult]),
        async handle(ctx, { body, access: grant }) {
          const mutations: CollabMutation[] = [];
          for (const [i, m] of body.mutations.entries()) {
            const node = await nodeIn(grant, m.node_id, 'content:write');
            if (body.single?.node_type !== undefined && body.single.node_type !== node.type) {
              throw validationError(`node_type is ${body.single.node_type}, but the node is ${node.type}.`, [{ field: 'node_type', message: `the node is ${node.type}` }]);
            }
            const field = body.single ? 'content' : `mutations.${i}.content`;
            mutations.push({ nodeId: node.id, content: contentForStore(node.type, m.content, field), message: m.message, baseVersion: m.base_version });
          }
          const r = await collabCommit(s.content, grant.projectId, grant.actor, mutations);
          if (body.single) {
            const [n] = r.nodes;
            const content = await s.content.contentOf(n!.node);
            ok(ctx, {
              node_id: n!.node.id,
              status: n!.merged ? 'merged' : 'clean',
              version: n!.node.version,
              final_content: presentedContent(n!.node.type, content),
              strategy: !n!.merged ? 'direct' : n!.node.type === 'json' ? 'json_key' : n!.node.type === 'markdown' ? 'line_diff3' : 'binary',
              project_version: r.projectVersion,
              commit_id: r.commitId,
            }, n!.merged ? 'Committed; merged with newer changes' : 'Committed');
            return;
          }
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
      route({
        method: 'get',
        path: '/project-history/:projectId',
        summary: "The project's commits after since_version (the first limit of them), newest first, as PuppyOne's web client reads them",
        description: 'The same commits as `GET /content/{project_id}/versions`, as far as the caller\'s scope reaches, with PuppyOne\'s `op` on each change.',
        permission: 'content:read',
        authorize: { content: ({ params }) => params.projectId },
        params: schema.projectHistoryParams,
        query: schema.projectHistoryQuery,
        response: puppyOneProjectHistorySchema,
        handle(ctx, { params, query, access }) {
          const r = listProjectCommitsSince(s, access, { limit: query.limit, since: query.since_version });
          ok(ctx, presentPuppyOneProjectHistory(params.projectId, access.scope, r));
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
