/** The shapes of the API answers the settings panel reads (README: Permissions, Connect an MCP client, …). */
export type ProjectRole = 'admin' | 'editor' | 'viewer';
export type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';
export type Status = 'active' | 'paused' | 'revoked';
export type Mode = 'read' | 'read_write';

export const projectRoles: readonly ProjectRole[] = ['admin', 'editor', 'viewer'];
export const orgRoles: readonly OrgRole[] = ['owner', 'admin', 'member', 'viewer'];

/** `GET /projects/{id}` and `GET /organizations/{id}`: with the caller's role. */
export interface ProjectWithRole {
  id: string;
  org_id: string;
  name: string;
  role: ProjectRole | null;
}
export interface OrganizationWithRole {
  id: string;
  name: string;
  role: OrgRole | null;
}

/** `GET /projects/{id}/members`: the effective role, and where it comes from. */
export interface ProjectMember {
  user_id: string;
  email: string;
  display_name: string;
  role: ProjectRole;
  project_role: ProjectRole | null;
  org_role: OrgRole | null;
}

export interface OrgMember {
  user_id: string;
  email: string;
  display_name: string;
  role: OrgRole;
  joined_at: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: OrgRole;
  created_at: string;
  expires_at: string;
}

/** `POST /organizations/{id}/invite`: the token and its address are shown only in this answer. */
export interface CreatedInvitation extends Invitation {
  token: string;
  accept_url: string;
}

/** A connection (`/connections`): an access key is one of kind `api`; the key itself is never listed. */
export interface Connection {
  id: string;
  kind: 'api' | 'agent' | 'mcp' | 'sandbox' | 'sync';
  name: string;
  scope_path: string;
  mode: Mode;
  status: Status;
  key_prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export interface Agent {
  id: string;
  name: string;
  description: string;
  model: string;
  status: Status;
  is_default: boolean;
  key_prefix: string;
  last_used_at: string | null;
  accesses: { id: string; path: string | null; mode: Mode }[];
  bash_tools: { id: string; name: string; path: string | null }[];
}

export interface McpEndpoint {
  id: string;
  name: string;
  path: string;
  mode: Mode;
  status: Status;
  server_url: string;
  tools: { id: string; name: string; type: string }[];
  client_config: unknown;
  clients: {
    cursor: { file: string; config: unknown };
    vscode: { file: string; config: unknown };
    claude_desktop: { file: string; config: unknown };
    claude_code: { command: string };
  };
  key_prefix: string;
  last_used_at: string | null;
}

export interface SandboxEndpoint {
  id: string;
  name: string;
  path: string;
  mode: Mode;
  status: Status;
  runtime: string;
  key_prefix: string;
  last_used_at: string | null;
}

export interface SyncRun {
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';
  started_at: string;
  finished_at: string | null;
  errors: string[];
}

/** `GET /sync/status`: every sync of the project at a glance. */
export interface SyncStatus {
  syncs: number;
  active: number;
  paused: number;
  items: {
    id: string;
    provider: string;
    name: string;
    status: 'active' | 'paused';
    pause_reason: string | null;
    trigger_mode: string;
    next_run_at: string | null;
    last_run: SyncRun | null;
  }[];
}

/** A list answer: its items under their own key, with the total when paginated. */
export type Page<K extends string, T> = { [k in K]: T[] } & { total: number };
