import type { OrgRole } from '../roles.ts';
import type { OrganizationsTable } from '../../db/metadata/tables/auth.ts';

export type OrganizationRecord = OrganizationsTable;

/** An organization as one of its members sees it. */
export interface MemberOrganization extends OrganizationRecord {
  role: OrgRole;
  member_count: number;
}

export interface OrgMemberView {
  user_id: string;
  email: string;
  display_name: string;
  role: OrgRole;
  created_at: string;
}
