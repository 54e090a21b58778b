/** The unified record behind every access key (spec 4.6): api, agent, mcp, sandbox and sync connections. */
export type ConnectionKind = 'api' | 'agent' | 'mcp' | 'sandbox' | 'sync';
export type ConnectionMode = 'read' | 'read_write';
export type ConnectionStatus = 'active' | 'paused' | 'revoked';

export const connectionKinds: readonly ConnectionKind[] = ['api', 'agent', 'mcp', 'sandbox', 'sync'];
export const connectionModes: readonly ConnectionMode[] = ['read', 'read_write'];
export const connectionStatuses: readonly ConnectionStatus[] = ['active', 'paused', 'revoked'];

export interface ConnectionRecord {
  id: string;
  project_id: string;
  kind: ConnectionKind;
  name: string;
  /** The subtree the key may reach: '' is the whole project. */
  scope_path: string;
  mode: ConnectionMode;
  status: ConnectionStatus;
  key_hash: string;
  key_prefix: string;
  config: string;
  /** The folder a node-bound connection (MCP or sandbox endpoint) follows; null for the other kinds. */
  node_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}
