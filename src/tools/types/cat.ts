import { z } from 'zod';
import { parseSliceRange, readSlice } from '../../commands/readSlice.ts';
import { textSlices } from '../../content/slices/textSlices.ts';
import { asText } from '../../search/chunker.ts';
import { defineToolType } from '../toolType.ts';

const range = (what: string) => z.string().max(40).optional().describe(what);

export const catTool = defineToolType({
  type: 'cat',
  summary: "Reads one node's content beneath the tool's node (JSON as a value, Markdown and text as text), or a slice of it by lines or bytes.",
  binds: 'any',
  config: z.object({}).strict(),
  input: z
    .object({
      path: z.string().max(4096).optional().describe("node path relative to the tool's node; empty = the node itself"),
      lines: range('"START-END" (1-based, inclusive; "START-" to the end): only these lines, with total_lines and total_bytes, to page through a large text'),
      bytes: range('"START-END" (0-based, inclusive): only these bytes (text by whole characters, binary files as base64)'),
    })
    .strict(),
  async run(call) {
    const g = await call.grant('content:read');
    const path = call.resolve(g, call.args.path);
    const wanted = parseSliceRange(call.args, (k) => `arguments.${k}`);
    if (wanted) {
      const node = call.env.content.findByPath(g.projectId, path);
      if (node) {
        const slice = await readSlice(textSlices, node, wanted, async () => (await call.env.content.readContent(g.projectId, { path })).bytes);
        return { id: node.id, path: node.path, type: node.type, version: node.version, size: node.size, ...slice };
      }
    }
    const { node, bytes } = await call.env.content.readContent(g.projectId, { path });
    const base = { id: node.id, path: node.path, type: node.type, version: node.version, size: node.size };
    if (node.type === 'json') return { ...base, content: JSON.parse(bytes.toString('utf8')) as unknown };
    if (node.type === 'markdown') return { ...base, content: bytes.toString('utf8') };
    const text = asText(bytes);
    return text !== null ? { ...base, encoding: 'utf8', content: text } : { ...base, encoding: 'base64', content: bytes.toString('base64') };
  },
});
