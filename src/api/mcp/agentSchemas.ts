import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import { bindingNamePattern } from '../../agents/bindings/toolBindings.ts';
import { clientConfigSchema } from './schemas.ts';

const id = z.string().min(1).max(100);
const name = z
  .string()
  .regex(bindingNamePattern, 'must start with a letter and hold only letters, digits, "_" and "-" (at most 64 characters)')
  .describe('the name the tool is offered under, unique per agent');
const description = z.string().max(2000).describe('what the model is told the tool does');

export const agentParams = z.object({ agent_id: id });
export const bindingParams = agentParams.extend({ tool_id: id });

export const bindBody = z
  .object({
    tool_id: id.describe("a tool of the agent's project"),
    name: name.optional().describe("default: the tool's name (it follows the tool's renames)"),
    description: description.optional().describe("default: the tool's description"),
  })
  .strict();

export const updateBindingBody = z
  .object({
    name: name.nullable().optional().describe("null: back to the tool's name"),
    description: description.nullable().optional().describe("null: back to the tool's description"),
  })
  .strict();

export const bindingSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  tool_id: z.string(),
  name: z.string().describe('the name the tool is offered under'),
  description: z.string().describe('the description it is offered with'),
  custom: z.object({ name: z.string().nullable(), description: z.string().nullable() }).describe("what the binding sets; null: the tool's own"),
  tool: z.object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    node_id: z.string().nullable(),
    path: z.string().nullable().describe("its node's path now ('' for the whole project); null once the node is gone (the tool is not offered then)"),
  }),
  writes: z.boolean().describe('the tool changes content: the agent writes through it (as actor agent), and it is offered only to callers who may write'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const bindingList = z.object({
  agent_id: z.string(),
  server_url: z.string().describe("the Streamable HTTP address of the agent's MCP server, which offers exactly these tools"),
  tools: z.array(bindingSchema),
  items: itemsSchema(bindingSchema, 'tools'),
});

export const statusSchema = z.object({
  agent_id: z.string(),
  active: z.boolean().describe('its key works (a paused agent is not active)'),
  tool_count: z.number().int().describe('bound tools'),
  calls_24h: z.number().int().describe('calls of its bound tools in the last 24 hours (MCP and chat)'),
  errors_24h: z.number().int().describe('those that failed'),
  last_call_at: z.string().nullable(),
});

export const regeneratedKeySchema = z.object({
  agent: z.object({ id: z.string(), name: z.string(), project_id: z.string(), status: z.string(), key_prefix: z.string() }),
  key: z.string().describe('shown only in this answer; the previous key stopped working'),
  server_url: z.string(),
  client_config: clientConfigSchema.describe("the agent's MCP server with the key filled in (shown only in this answer)"),
});
