import type { McpEndpoint } from '../../mcp/endpoints.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';

export const KEY_PLACEHOLDER = '<MCP endpoint key>';

/** The key a client config names the server by: the endpoint's name as a slug. */
const serverKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'cns';

export const serverUrl = (baseUrl: string, endpointId: string) => `${baseUrl}/api/v1/mcp/e/${encodeURIComponent(endpointId)}`;

/** An `mcpServers` block naming one remote server by `name`, with `key` in the Authorization header. */
export function remoteServerConfig(name: string, url: string, key: string) {
  return { mcpServers: { [serverKey(name)]: { type: 'http' as const, url, headers: { Authorization: `Bearer ${key}` } } } };
}

/** The `mcpServers` block with `key` (or a placeholder) in the Authorization header. */
export function clientConfig(e: McpEndpoint, baseUrl: string, key = KEY_PLACEHOLDER) {
  return remoteServerConfig(e.connection.name, serverUrl(baseUrl, e.connection.id), key);
}

/** The same server for each common client, in its own format (the key as a placeholder). */
function clients(e: McpEndpoint, baseUrl: string) {
  const name = serverKey(e.connection.name);
  const url = serverUrl(baseUrl, e.connection.id);
  const authorization = `Bearer ${KEY_PLACEHOLDER}`;
  return {
    cursor: { file: '~/.cursor/mcp.json', config: { mcpServers: { [name]: { url, headers: { Authorization: authorization } } } } },
    vscode: { file: '.vscode/mcp.json', config: { servers: { [name]: { type: 'http', url, headers: { Authorization: authorization } } } } },
    claude_desktop: {
      file: 'claude_desktop_config.json',
      config: { mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${CNS_MCP_AUTH}'], env: { CNS_MCP_AUTH: authorization } } } },
    },
    claude_code: { command: `claude mcp add --transport http ${name} ${url} --header "Authorization: ${authorization}"` },
  };
}

/** An endpoint without its key hash; `key_prefix` tells keys apart. */
export function presentEndpoint(e: McpEndpoint, baseUrl: string, tools: ToolRecord[]) {
  const c = e.connection;
  return {
    id: c.id,
    name: c.name,
    project_id: c.project_id,
    node_id: e.nodeId,
    path: c.scope_path,
    mode: c.mode,
    status: c.status,
    tool_ids: e.toolIds,
    tools: tools.map((t) => ({ id: t.id, name: t.name, type: t.type })),
    server_url: serverUrl(baseUrl, c.id),
    transport: 'streamable-http' as const,
    client_config: clientConfig(e, baseUrl),
    clients: clients(e, baseUrl),
    key_prefix: c.key_prefix,
    created_by: c.created_by,
    created_at: c.created_at,
    updated_at: c.updated_at,
    last_used_at: c.last_used_at,
  };
}
