import { z } from 'zod';
import type { TreeNode } from '../../content/contentStore.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { defineToolType } from '../toolType.ts';

interface TreeOut {
  id: string;
  name: string;
  path: string;
  type: string;
  children?: TreeOut[];
}

export const treeTool = defineToolType({
  type: 'tree',
  summary: "The nested tree beneath the tool's node (names, paths, types), to a depth.",
  binds: 'folder',
  config: z.object({ max_depth: z.number().int().min(1).max(20).optional() }).strict(),
  input: z
    .object({
      path: z.string().max(4096).optional().describe("folder path relative to the tool's node"),
      max_depth: z.number().int().min(1).max(20).optional().describe('levels below the folder (default 3)'),
    })
    .strict(),
  async run(call) {
    const g = await call.grant('content:read');
    const path = call.resolve(g, call.args.path, { listing: true });
    const depth = call.args.max_depth ?? call.config.max_depth ?? 3;
    const tree = call.env.content.tree(g.projectId, path, depth);
    return visible(call.env.access, g, tree);
  },
});

/** Each level filtered by the policy (a scoped key sees only the way down to its scope). */
function visible(access: ContentAccess, g: ContentGrant, n: TreeNode): TreeOut {
  const out: TreeOut = { id: n.id, name: n.name, path: n.path, type: n.type };
  if (n.type === 'folder' && n.children) out.children = access.visibleChildren(g, n.path, n.children).map((c) => visible(access, g, c));
  return out;
}
