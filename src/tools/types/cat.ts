import { z } from 'zod';
import { asText } from '../../search/chunker.ts';
import { defineToolType } from '../toolType.ts';

export const catTool = defineToolType({
  type: 'cat',
  summary: "Reads one node's content beneath the tool's node (JSON as a value, Markdown and text as text).",
  binds: 'any',
  config: z.object({}).strict(),
  input: z.object({ path: z.string().max(4096).optional().describe("node path relative to the tool's node; empty = the node itself") }).strict(),
  async run(call) {
    const g = call.grant('content:read');
    const path = call.resolve(g, call.args.path);
    const { node, bytes } = await call.env.content.readContent(g.projectId, { path });
    const base = { id: node.id, path: node.path, type: node.type, version: node.version, size: node.size };
    if (node.type === 'json') return { ...base, content: JSON.parse(bytes.toString('utf8')) as unknown };
    if (node.type === 'markdown') return { ...base, content: bytes.toString('utf8') };
    const text = asText(bytes);
    return text !== null ? { ...base, encoding: 'utf8', content: text } : { ...base, encoding: 'base64', content: bytes.toString('base64') };
  },
});
