import { z } from 'zod';
import { defineToolType } from '../toolType.ts';
import { presentEntry } from './present.ts';

export const lsTool = defineToolType({
  type: 'ls',
  summary: "Lists a folder's children beneath the tool's node.",
  binds: 'folder',
  config: z.object({}).strict(),
  input: z.object({ path: z.string().max(4096).optional().describe("folder path relative to the tool's node; empty = the node itself") }).strict(),
  async run(call) {
    const g = await call.grant('content:read');
    const path = call.resolve(g, call.args.path, { listing: true });
    const children = call.env.content.listChildren(g.projectId, path);
    return { path, children: call.env.access.visibleChildren(g, path, children).map(presentEntry) };
  },
});
