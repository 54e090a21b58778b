import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import { toolTypeNames } from '../../tools/registry.ts';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().max(2000);
const id = z.string().min(1).max(100);
const config = z.record(z.string(), z.unknown());

export const toolParams = z.object({ tool_id: id });
export const nodeParams = z.object({ node_id: id });
export const projectParams = z.object({ project_id: id });

export const listToolsQuery = z
  .object({ org_id: id.optional(), project_id: id.optional() })
  .refine((q) => q.org_id || q.project_id, { message: 'org_id or project_id is required', path: ['org_id'] });

export const createToolBody = z.object({
  name,
  type: z.enum(toolTypeNames, { error: `one of ${toolTypeNames.join(', ')}` }),
  node_id: id.nullable().optional().describe('the node the tool is bound to; omit (with project_id) for the whole project'),
  project_id: id.optional(),
  config: config.optional(),
  description: description.optional(),
});

export const createSearchToolBody = z.object({
  project_id: id,
  node_id: id.nullable().optional().describe('the folder or node to search beneath; omit for the whole project'),
  name,
  config: config.optional(),
  description: description.optional(),
});

export const updateToolBody = z.object({ name: name.optional(), description: description.optional(), config: config.optional() });

export const callToolBody = z.object({ arguments: z.record(z.string(), z.unknown()).default({}) });

export const indexStateSchema = z.object({
  status: z.enum(['pending', 'indexing', 'ready', 'error']),
  documents: z.number().int(),
  chunks: z.number().int(),
  indexed_project_version: z.number().int(),
  project_version: z.number().int(),
  lag_versions: z.number().int(),
  mode: z.enum(['lexical', 'hybrid']),
  embedding_model: z.string().nullable(),
  pending_embeddings: z.number().int(),
  vector_index: z
    .object({ cells: z.number().int().describe('0: every vector is scanned (exact); otherwise an IVF with this many cells'), rebuilding: z.boolean() })
    .nullable()
    .describe('hybrid only: the approximate vector index'),
  last_error: z.string().nullable(),
  updated_at: z.string(),
});

export const toolSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  type: z.string(),
  node_id: z.string().nullable(),
  project_id: z.string(),
  config: config,
  input_schema: z.unknown().describe("JSON Schema of the call's arguments (what MCP and LLM providers are given)"),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const toolList = z.object({ tools: z.array(toolSchema), items: itemsSchema(toolSchema, 'tools'), total: z.number().int() });
export const toolWithIndex = z.object({ tool: toolSchema, index: indexStateSchema });
export const callResult = z.object({ tool_id: z.string(), type: z.string(), result: z.unknown() });

export const searchResultSchema = z.object({
  query: z.string(),
  mode: z.enum(['lexical', 'vector', 'hybrid']),
  warning: z.string().optional(),
  results: z.array(
    z.object({
      node_id: z.string(),
      path: z.string(),
      type: z.string(),
      version: z.number().int(),
      chunk_index: z.number().int(),
      score: z.number(),
      snippet: z.string().describe('matched terms are marked **like this**'),
      heading_path: z.string(),
    }),
  ),
});

export const toolTypeList = z.object({
  types: z.array(z.object({ type: z.string(), summary: z.string(), binds: z.enum(['folder', 'any']), input_schema: z.unknown(), config_schema: z.unknown() })),
});
