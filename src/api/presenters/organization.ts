import { z } from 'zod';
import type { InvitationRecord } from '../../domain/invitations/invitationStore.ts';
import type { OrganizationRecord, OrgMemberView } from '../../domain/organizations/organizationRecord.ts';
import { orgRoles, type OrgRole } from '../../domain/roles.ts';

const orgRole = z.enum(orgRoles);

/** An organization as the caller sees it, with their role in it. */
export function presentOrganization(org: OrganizationRecord, role: OrgRole | null) {
  return {
    id: org.id,
    name: org.name,
    description: org.description,
    is_default: org.is_default === 1,
    created_by: org.created_by,
    created_at: org.created_at,
    updated_at: org.updated_at,
    role,
  };
}

export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  is_default: z.boolean(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  role: orgRole.nullable().describe("the caller's role in the organization"),
});

export function presentOrgMember(m: OrgMemberView) {
  // created_at: the same time, by the name PuppyOne's clients read (a scalar: it costs nothing).
  return { user_id: m.user_id, email: m.email, display_name: m.display_name, role: m.role, joined_at: m.created_at, created_at: m.created_at };
}

export const orgMemberSchema = z.object({
  user_id: z.string(),
  email: z.string(),
  display_name: z.string(),
  role: orgRole,
  joined_at: z.string(),
  created_at: z.string().describe("joined_at, by PuppyOne's name"),
});

/** Never the token hash: the token itself is shown once, by the invite route. */
export function presentInvitation(inv: InvitationRecord) {
  return {
    id: inv.id,
    org_id: inv.org_id,
    email: inv.email,
    role: inv.role,
    invited_by: inv.invited_by,
    created_at: inv.created_at,
    expires_at: inv.expires_at,
    accepted_at: inv.accepted_at,
  };
}

export const invitationSchema = z.object({
  id: z.string(),
  org_id: z.string(),
  email: z.string(),
  role: orgRole,
  invited_by: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  accepted_at: z.string().nullable(),
});
