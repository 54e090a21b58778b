import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';

const id = z.string().min(1).max(100);
const name = z.string().trim().min(1, 'must not be empty').max(200);
const url = z.string().trim().min(1).max(2048).describe("the MCP server's Streamable HTTP address (http or https; public addresses only unless the operator allows private ones)");
const headers = z
  .record(z.string().max(200), z.string())
  .describe('sent to the MCP server with every forwarded request (an API key, …); stored encrypted, never shown again');

export const proxyParams = z.object({ server_id: id });
export const listProxyQuery = paginationQuery.extend({ project_id: id });

export const createProxyBody = z.object({ project_id: id, name, url, headers: headers.optional() }).strict();

export const updateProxyBody = z.object({ name: name.optional(), url: url.optional(), headers: headers.optional().describe('replaces every stored header ({} removes them)') }).strict();

export const proxyServerSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  url: z.string().describe('without userinfo or query string'),
  header_names: z.array(z.string()).describe('the names of the stored headers (their values are never returned)'),
  proxy_url: z.string().describe('the Streamable HTTP address to connect an MCP client to: requests go on to the server'),
  transport: z.literal('streamable-http'),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const proxyListSchema = z.object({ mcp_proxy_servers: z.array(proxyServerSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });
