import { toolSchemas, toolTypes } from '../../tools/registry.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';
import { toolWrites } from '../../agents/tools/reach.ts';
import type { CallContext } from '../context.ts';
import { typeInputSchema, type InputSchema, type McpTool } from './mcpTool.ts';

/** MCP tool names are 1-64 of A-Z a-z 0-9 _ - (what clients and LLM providers accept). */
export function mcpName(name: string, fallback: string, taken: ReadonlySet<string>): string {
  const base = name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 60) || fallback;
  let candidate = base;
  for (let i = 2; taken.has(candidate); i++) candidate = `${base}_${i}`;
  return candidate;
}

/** A tool writes content when its type writes or when it is a shell tool that writes its changes back. */
const recordWrites = (t: ToolRecord) => toolWrites(t.type, t.config);

/**
 * A tool of the project bound to the endpoint (`tool_ids`), offered as it is over REST: its own
 * node, config and input schema (paths relative to its node), run by `Tools.call` as the caller.
 */
export function boundTool(c: CallContext, record: ToolRecord, name: string): McpTool {
  const type = toolTypes.get(record.type);
  const node = record.node_id ? c.env.content.findById(record.node_id) : null;
  const where = record.node_id ? (node?.path ?? '(its node is gone)') : 'the project root';
  const input = toolSchemas(record.type).input as InputSchema;
  const relative = input.properties && ('path' in input.properties || 'path_prefix' in input.properties) ? ` Paths are relative to "${where}".` : '';
  return {
    name,
    title: record.name,
    description: `${record.description || type?.summary || record.type} (a ${record.type} tool bound to "${where}".${relative})`,
    annotations: { readOnlyHint: !recordWrites(record), openWorldHint: false },
    writes: recordWrites(record),
    inputSchema: () => typeInputSchema(record.type),
    async run(call, args) {
      return (await call.env.tools.call(call.principal, record, args)) as Record<string, unknown>;
    },
  };
}
