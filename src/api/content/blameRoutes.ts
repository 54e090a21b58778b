import { z } from 'zod';
import { blameNode } from '../../commands/blameNode.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { blameSchema, presentBlame } from '../../presenters/blame.ts';
import { nodeById } from '../shared/nodeHistory.ts';
import { nodeParams, optionalProjectQuery } from '../shared/nodeHistorySchemas.ts';
import { projectParams } from './schemas.ts';

const version = z.coerce.number().int().min(1).optional().describe("the node's version to blame (default: the current one)");
const DESCRIPTION =
  'For each line of a Markdown, text or JSON file: the version that last changed it, with the actor (user or agent), time and message; ' +
  'for JSON also each key path. Computed with git blame along the project history (renames and moves followed), cached per version. ' +
  '422 for folders, binary files and files over 16 MiB.';

/** Line attribution, by path (`/content/{project}/blame`) and by node id (`/nodes/{id}/blame`): one command, one presenter. */
export function blameRoutes(s: { content: ContentStore }): RouteGroup {
  return {
    prefix: '',
    tag: 'History',
    routes: [
      route({
        method: 'get',
        path: '/content/:projectId/blame',
        summary: 'Who last changed each line of a file (by path)',
        description: DESCRIPTION,
        permission: 'content:read',
        authorize: { content: ({ params }) => params.projectId, paths: ({ query }) => [query.path] },
        params: projectParams,
        query: z.object({ path: z.string().min(1, 'path is required').max(4096), version }),
        response: blameSchema,
        async handle(ctx, { params: { projectId }, query }) {
          const node = s.content.getByPath(projectId, query.path);
          ok(ctx, presentBlame(await blameNode(s, node, query.version)));
        },
      }),
      route({
        method: 'get',
        path: '/nodes/:nodeId/blame',
        summary: 'Who last changed each line of a file (by node id)',
        description: DESCRIPTION,
        permission: 'content:read',
        authorize: nodeById,
        params: nodeParams,
        query: optionalProjectQuery.extend({ version }),
        response: blameSchema,
        async handle(ctx, { query, access: { node } }) {
          ok(ctx, presentBlame(await blameNode(s, node, query.version)));
        },
      }),
    ],
  };
}
