import { z } from 'zod';
import { writeNode, writeTypeOf } from '../../commands/writeNode.ts';
import { invalidField } from '../../errors/domainError.ts';
import { defineToolType } from '../toolType.ts';

const writable = z.enum(['markdown', 'json', 'file']);

export const writeTool = defineToolType({
  type: 'write',
  summary: "Creates or updates a node beneath the tool's node; the new version's actor is the caller.",
  binds: 'any',
  config: z.object({ allowed_types: z.array(writable).min(1).optional() }).strict(),
  input: z
    .object({
      path: z.string().max(4096).optional().describe("node path relative to the tool's node (empty when the tool is bound to the node itself)"),
      content: z.unknown().describe('markdown/file: a string; json: an object or array'),
      type: writable.optional().describe('for a new node; default from the name: .md or .markdown markdown, .json json, otherwise file'),
      base_version: z.number().int().min(0).optional().describe('conflict (409) unless the node is at this version; 0 = must not exist yet'),
      message: z.string().max(1000).optional(),
    })
    .strict(),
  async run(call) {
    const g = await call.grant('content:write');
    const path = call.resolve(g, call.args.path);
    if (path === '' || (call.rootNode?.type === 'folder' && path === call.root)) {
      throw invalidField('arguments.path', "path must name a node beneath the tool's folder");
    }
    const { content } = call.env;
    const type = writeTypeOf(content, g.projectId, path, call.args.type);
    if (call.config.allowed_types && !call.config.allowed_types.includes(type)) {
      throw invalidField('arguments.type', `this tool writes only ${call.config.allowed_types.join(', ')} nodes`);
    }
    const r = await writeNode({ content }, g, { path, type, content: call.args.content, baseVersion: call.args.base_version, message: call.args.message, via: call.via });
    return { id: r.node.id, path: r.node.path, type: r.node.type, version: r.node.version, changed: r.changed, project_version: r.projectVersion };
  },
});
