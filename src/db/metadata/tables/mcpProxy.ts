/** External MCP servers registered on projects (migration 011): src/mcp/proxy/. */
export interface McpProxyTables {
  mcp_proxy_servers: McpProxyServersTable;
}

/** Header values only sealed (the row id as AAD); (project_id, name) is unique. */
export interface McpProxyServersTable {
  id: string;
  project_id: string;
  name: string;
  url: string;
  headers_encrypted: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
