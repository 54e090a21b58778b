import { z } from 'zod';
import { itemsSchema } from '../../presenters/items.ts';
import { accessToolNames, bashNamePattern, DEFAULT_MAX_TOOL_CALLS_PER_ROUND, DEFAULT_MAX_TOOL_ROUNDS } from '../../agents/config/agentRecord.ts';
import { MAX_TEMPERATURE, MAX_TOOL_CALLS_PER_ROUND, MAX_TOOL_ROUNDS } from '../../agents/config/settingsRules.ts';
import { MAX_LIMIT, paginationQuery } from '../../http/pagination.ts';
import { endpointLimitsSchema } from '../../sandbox/limits.ts';

const id = z.string().min(1).max(100);
const name = z.string().trim().min(1, 'must not be empty').max(200);
const systemPrompt = z.string().max(100_000).describe('what the agent is told before every conversation');
const model = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200)
  .describe(
    '`provider:model`: openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:llama3.1 (an OpenAI-compatible server); or a bare model name, kept with its provider: claude-* is anthropic, gpt-*, chatgpt-* and o1, o3, o4… are openai, any other the provider of the server default model (CNS_DEFAULT_MODEL)',
  );
const description = z.string().max(2000);
const temperature = z.number().min(0).max(MAX_TEMPERATURE).describe('0 to 2; null or omitted: the provider default');
const maxToolRounds = z.number().int().min(1).max(MAX_TOOL_ROUNDS).describe(`tool rounds per chat turn (default ${DEFAULT_MAX_TOOL_ROUNDS})`);
const maxToolCallsPerRound = z
  .number()
  .int()
  .min(1)
  .max(MAX_TOOL_CALLS_PER_ROUND)
  .describe(`tool calls run per model answer (default ${DEFAULT_MAX_TOOL_CALLS_PER_ROUND}); the calls past it are not run, and the model is told so in their results`);
const mode = z.enum(['read', 'read_write']);
const nodeId = id.nullable().describe('the node it reaches (its subtree for a folder); null: the whole project');
const tools = z
  .array(z.enum(accessToolNames, { error: `one of ${accessToolNames.join(', ')}` }))
  .min(1, 'name at least one tool (omit it for the defaults)')
  .max(accessToolNames.length * 2)
  .describe('omitted: read offers ls, cat, tree, search, query_json; read_write adds write');
const bashName = z.string().regex(bashNamePattern, 'must start with a letter and hold only letters, digits, "_" and "-" (at most 64 characters)').describe('the tool name the model sees (default bash), unique per agent');

export const agentParams = z.object({ agent_id: id });
export const accessParams = agentParams.extend({ access_id: id });
export const bashParams = agentParams.extend({ bash_id: id });
export const projectQuery = z.object({ project_id: id });
export const listAgentsQuery = paginationQuery.extend({ project_id: id });

export const createAgentBody = z
  .object({
    name,
    project_id: id,
    system_prompt: systemPrompt,
    model: model.optional().describe('default: the server default model (CNS_DEFAULT_MODEL)'),
    description: description.optional(),
    temperature: temperature.nullable().optional(),
    max_tool_rounds: maxToolRounds.optional(),
    max_tool_calls_per_round: maxToolCallsPerRound.optional(),
    // PuppyOne's command line sends its agent type; every agent here is a chat agent, so any other type is refused, not ignored.
    type: z.literal('chat', { error: "type: only 'chat' agents exist here (scheduled agents do not)" }).optional().describe("PuppyOne's agent type; only 'chat'"),
  })
  .strict();

export const updateAgentBody = z
  .object({
    name: name.optional(),
    system_prompt: systemPrompt.optional(),
    model: model.optional(),
    description: description.optional(),
    temperature: temperature.nullable().optional().describe('null: back to the provider default'),
    max_tool_rounds: maxToolRounds.optional(),
    max_tool_calls_per_round: maxToolCallsPerRound.optional(),
    status: z.enum(['active', 'paused']).optional().describe("paused: the agent's key stops working until it is active again"),
  })
  .strict();

export const accessBody = z.object({ node_id: nodeId, mode, tools: tools.optional() }).strict();
export const updateAccessBody = z
  .object({ node_id: nodeId.optional(), mode: mode.optional(), tools: tools.optional().describe('omitted with a new mode: default tools follow the mode, tools chosen by hand stay') })
  .strict();
export const replaceAccessesBody = z.object({ accesses: z.array(accessBody).max(100) }).strict();

const bashNode = id.nullable().describe('the folder whose subtree the shell works in; null: the whole project');
export const bashBody = z
  .object({
    node_id: bashNode,
    name: bashName.optional(),
    mode: mode.optional().describe("read (default): commands' changes are not written back; read_write: they become versions"),
    limits: endpointLimitsSchema.optional(),
  })
  .strict();
export const updateBashBody = z
  .object({ node_id: bashNode.optional(), name: bashName.optional(), mode: mode.optional(), limits: endpointLimitsSchema.optional().describe('replaces the limits ({} = the defaults)') })
  .strict();
export const replaceBashBody = z.object({ bash_tools: z.array(bashBody).max(50) }).strict();

export const executionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  before: id.optional().describe("an execution id: the page starts after it (the previous page's `next`)"),
});

const path = z.string().nullable().describe("the node's current path ('' for the whole project); null once the node is in the trash or deleted (it then grants nothing)");

export const accessSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  node_id: z.string().nullable(),
  path,
  mode,
  tools: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const bashSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  node_id: z.string().nullable(),
  path,
  name: z.string(),
  mode,
  limits: endpointLimitsSchema,
  created_at: z.string(),
  updated_at: z.string(),
});

export const agentSchema = z.object({
  id: z.string().describe("the agent's id, which is also its connection's id"),
  project_id: z.string(),
  name: z.string().describe('its versions are authored `agent:<name>`'),
  description: z.string(),
  system_prompt: z.string(),
  model: z.string(),
  temperature: z.number().nullable(),
  max_tool_rounds: z.number().int(),
  max_tool_calls_per_round: z.number().int().describe('tool calls run per model answer; the rest are answered "not run"'),
  status: z.enum(['active', 'paused', 'revoked']),
  is_default: z.boolean().describe("the project's default agent"),
  key_prefix: z.string(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
  accesses: z.array(accessSchema),
  bash_tools: z.array(bashSchema),
});

export const agentWithKey = z.object({
  id: z.string().describe("agent.id, where PuppyOne's command line reads it"),
  agent: agentSchema,
  key: z.string().describe("the agent's access key, shown only in this answer"),
});
export const agentList = z.object({ agents: z.array(agentSchema), items: itemsSchema(agentSchema, 'agents'), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
export const accessList = z.object({ accesses: z.array(accessSchema) });
export const bashList = z.object({ bash_tools: z.array(bashSchema) });

export const executionSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  session_id: z.string().nullable().describe('null once the session was deleted'),
  status: z.enum(['running', 'succeeded', 'failed', 'cancelled']),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  tool_calls: z.array(
    z.object({
      name: z.string(),
      arguments: z.record(z.string(), z.unknown()).optional().describe('only with details full'),
      ok: z.boolean(),
      duration_ms: z.number(),
    }),
  ),
  versions_written: z.array(z.object({ path: z.string(), version: z.number().int() })),
  error: z.object({ code: z.string(), message: z.string().optional().describe('only with details full') }).catchall(z.unknown()).nullable(),
  details: z
    .enum(['full', 'summary'])
    .describe(
      "full (for whoever started the turn's chat session, and the project's admins): the tool calls' arguments and the error's message; summary (anyone else who reads the agent, and everyone but the admins once the session is deleted): status, counts and timings",
    ),
});

export const executionList = z.object({
  executions: z.array(executionSchema),
  next: z.string().nullable().describe('pass as `before` for the next (older) page; null on the last page'),
});
