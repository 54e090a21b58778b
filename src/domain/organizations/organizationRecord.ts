import type { OrgRole } from '../roles.ts';

export interface OrganizationRecord {
  id: string;
  name: string;
  description: string;
  /** 1 for the organization `POST /auth/initialize` created for its creator. */
  is_default: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

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
