import { z } from 'zod';
import { presentBlame } from '../../presenters/blame.ts';
import { defineToolType } from '../toolType.ts';

export const blameTool = defineToolType({
  type: 'blame',
  summary:
    'Who last changed each line of a Markdown, text or JSON file beneath the tool\'s node: runs of lines with the version, ' +
    'actor (user or agent), time and message that last changed them; for JSON each key path too.',
  binds: 'any',
  config: z.object({}).strict(),
  input: z
    .object({
      path: z.string().max(4096).optional().describe("file path relative to the tool's node; empty = the node itself"),
      version: z.number().int().min(1).optional().describe("a version of the file (default: the current one)"),
    })
    .strict(),
  async run(call) {
    const g = await call.grant('content:read');
    const path = call.resolve(g, call.args.path);
    return presentBlame(await call.env.content.blame(g.projectId, { path }, call.args.version));
  },
});
