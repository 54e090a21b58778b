import { z } from 'zod';
import type { ToolType } from './toolType.ts';
import { blameTool } from './types/blame.ts';
import { catTool } from './types/cat.ts';
import { grepTool } from './types/grep.ts';
import { lsTool } from './types/ls.ts';
import { queryJsonTool } from './types/queryJson.ts';
import { searchTool } from './types/search.ts';
import { shellTool } from './types/shell.ts';
import { treeTool } from './types/tree.ts';
import { writeTool } from './types/write.ts';

/** Every tool type (spec 4.9), by name. */
export const toolTypes: ReadonlyMap<string, ToolType> = new Map(
  [lsTool, catTool, treeTool, writeTool, searchTool, grepTool, queryJsonTool, shellTool, blameTool].map((t) => [t.type, t]),
);

export const toolTypeNames = [...toolTypes.keys()] as [string, ...string[]];

const schemaCache = new Map<string, { input: unknown; config: unknown }>();

/** A type's input and config as JSON Schema, exactly what MCP clients and LLM providers are given. */
export function toolSchemas(type: string): { input: unknown; config: unknown } {
  let s = schemaCache.get(type);
  if (!s) {
    const t = toolTypes.get(type)!;
    s = { input: z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }), config: z.toJSONSchema(t.config, { io: 'input', unrepresentable: 'any' }) };
    schemaCache.set(type, s);
  }
  return s;
}
