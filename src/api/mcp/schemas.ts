import { z } from 'zod';
import { createBodyBase, endpointMode, endpointId as id, updateBodyBase } from '../shared/nodeBoundRoutes.ts';

export { endpointParams } from '../shared/nodeBoundRoutes.ts';

const modeDescription = 'read: only the reading tools are offered; read_write: also write, mkdir, mv, rm and rollback';
/** Least privilege: a client may write only through an endpoint made (or changed) to allow it. */
const createModeDescription = `read (the default) or read_write. ${modeDescription}`;
const toolIds = z.array(id).max(100).describe("tools of the endpoint's project it also offers (shell, query_json, search, …)");

export const createEndpointBody = createBodyBase(createModeDescription, 'the folder whose subtree the endpoint serves').extend({ tool_ids: toolIds.optional() }).strict();

export const updateEndpointBody = updateBodyBase(modeDescription).extend({ tool_ids: toolIds.optional().describe('replaces the bound tools') }).strict();

const headers = z.record(z.string(), z.string());
const remoteServer = z.object({ type: z.literal('http'), url: z.string(), headers });
export const clientConfigSchema = z
  .object({ mcpServers: z.record(z.string(), remoteServer) })
  .describe('a `mcpServers` block for clients that take remote servers by URL (Cursor, Claude Code `.mcp.json`, Windsurf, …)');

const fileConfig = z.object({ file: z.string(), config: z.record(z.string(), z.unknown()) });
const clientsSchema = z
  .object({
    cursor: fileConfig,
    vscode: fileConfig,
    claude_desktop: fileConfig.describe('Claude Desktop starts local servers only: mcp-remote bridges to this URL'),
    claude_code: z.object({ command: z.string() }),
  })
  .describe('ready-to-paste configuration per client');

export const endpointSchema = z.object({
  id: z.string(),
  name: z.string(),
  project_id: z.string(),
  node_id: z.string(),
  path: z.string().describe("the folder's path: the subtree the endpoint serves"),
  mode: endpointMode.describe(modeDescription),
  status: z.enum(['active', 'paused', 'revoked']),
  tool_ids: z.array(z.string()),
  tools: z.array(z.object({ id: z.string(), name: z.string(), type: z.string() })).describe('the bound tools that exist'),
  server_url: z.string().describe('the Streamable HTTP address of its MCP server'),
  transport: z.literal('streamable-http'),
  client_config: clientConfigSchema.describe('with a placeholder where the key goes'),
  clients: clientsSchema,
  key_prefix: z.string(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});

export const endpointWithKey = z.object({
  mcp_endpoint: endpointSchema,
  key: z.string().describe('shown only in this answer'),
  client_config: clientConfigSchema.describe('with the key filled in: paste it as is (shown only in this answer)'),
});
