/**
 * Accounts, sign-ins, organizations, memberships, invitations and connections (access keys)
 * (migrations 001, 030), as the data-access layer sees them. The domain's records
 * (src/domain/) are these rows; this layer sits below the domain, so it states them itself.
 */
export interface AuthTables {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  organizations: OrganizationsTable;
  org_members: OrgMembersTable;
  invitations: InvitationsTable;
  project_members: ProjectMembersTable;
  connections: ConnectionsTable;
}

type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';
type ProjectRole = 'admin' | 'editor' | 'viewer';

export interface UsersTable {
  id: string;
  email: string;
  password_hash: string;
  display_name: string;
  is_admin: number;
  initialized_at: string | null;
  onboarding_completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RefreshTokensTable {
  id: string;
  user_id: string;
  /** One sign-in: every token a rotation issues keeps it (the cookie session's id). */
  family_id: string;
  /** SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  created_at: string;
  expires_at: string;
  rotated_at: string | null;
  revoked_at: string | null;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  description: string;
  /** 1 for the organization `POST /auth/initialize` created for its creator. */
  is_default: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: OrgRole;
  created_at: string;
}

export interface InvitationsTable {
  id: string;
  org_id: string;
  email: string;
  role: OrgRole;
  /** SHA-256 of the token; the token is shown once, at creation. */
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  role: ProjectRole;
  created_at: string;
}

export interface ConnectionsTable {
  id: string;
  project_id: string;
  kind: 'api' | 'agent' | 'mcp' | 'sandbox' | 'sync';
  name: string;
  scope_path: string;
  mode: 'read' | 'read_write';
  status: 'active' | 'paused' | 'revoked';
  key_hash: string;
  key_prefix: string;
  /** Kind-specific settings, JSON. */
  config: string;
  /** The folder a node-bound connection (MCP or sandbox endpoint) follows. */
  node_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}
