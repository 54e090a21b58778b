import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from '../helpers/server.ts';

export interface Endpoint {
  id: string;
  key: string;
  url: string;
  record: Record<string, unknown> & { path: string; name: string };
}

/**
 * Creates an MCP endpoint over REST (201 expected) on the folder at `path`: read_write unless
 * `mode` says otherwise (the service's default is read; these tests write through endpoints).
 */
export async function createEndpoint(
  server: TestServer,
  token: string,
  projectId: string,
  path: string,
  options: { name?: string; mode?: 'read' | 'read_write'; tool_ids?: string[] } = {},
): Promise<Endpoint> {
  const node = server.services.content.findByPath(projectId, path);
  if (!node) throw new Error(`no node at ${path}`);
  const res = await server.api('POST', '/mcp-endpoints', { token, body: { project_id: projectId, node_id: node.id, name: options.name ?? `mcp ${path}`, mode: 'read_write', ...options } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${JSON.stringify(res.body)}`);
  const e = res.body.data;
  return { id: e.mcp_endpoint.id, key: e.key, url: e.mcp_endpoint.server_url, record: e.mcp_endpoint };
}

/** An SDK client connected (initialized) to an endpoint with `token` as its bearer credential. */
export async function connect(url: string, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport; close(): Promise<void> }> {
  const client = new Client({ name: 'cns-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return {
    client,
    transport,
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A tool call's result, typed for assertions. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { isError: r.isError === true, data: r.structuredContent as any, text: (r.content[0] as { text: string }).text };
}

/** A raw Streamable HTTP request (for statuses the SDK client turns into exceptions). */
export async function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export const initializeMessage = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
