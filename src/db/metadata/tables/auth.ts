import type { ConnectionRecord } from '../../../domain/connections/connectionRecord.ts';
import type { InvitationRecord } from '../../../domain/invitations/invitationStore.ts';
import type { OrganizationRecord } from '../../../domain/organizations/organizationRecord.ts';
import type { OrgRole, ProjectRole } from '../../../domain/roles.ts';
import type { UserRecord } from '../../../domain/users/userStore.ts';

/**
 * Accounts, sign-ins, organizations, memberships, invitations and connections (access keys)
 * (migrations 001, 030). Rows are the domain's records as stored, so those are the types.
 */
export interface AuthTables {
  users: UserRecord;
  refresh_tokens: RefreshTokensTable;
  organizations: OrganizationRecord;
  org_members: OrgMembersTable;
  invitations: InvitationRecord;
  project_members: ProjectMembersTable;
  connections: ConnectionRecord;
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

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: OrgRole;
  created_at: string;
}

export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  role: ProjectRole;
  created_at: string;
}
