import { z } from 'zod';
import { orgRoles } from '../../domain/roles.ts';
import { paginationQuery } from '../../http/pagination.ts';
import { pageFields } from '../presenters/page.ts';
import { itemsSchema } from '../../presenters/items.ts';
import { invitationSchema, organizationSchema, orgMemberSchema } from '../presenters/organization.ts';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().trim().max(2000);
const orgRole = z.enum(orgRoles);

export const listOrganizationsQuery = paginationQuery;

export const createOrganizationBody = z.object({ name, description: description.optional() });

export const updateOrganizationBody = z.object({ name: name.optional(), description: description.optional() });

export const orgRoleBody = z.object({ role: orgRole });

export const inviteBody = z.object({
  email: z.string().trim().email().max(320),
  role: orgRole.default('member'),
});

export const orgParams = z.object({ org_id: z.string() });
export const memberParams = z.object({ org_id: z.string(), user_id: z.string() });
export const invitationTokenParams = z.object({ token: z.string() });

const listedOrganization = organizationSchema.extend({ member_count: z.number().int().describe('members of the organization') });
export const organizationList = z.object({ organizations: z.array(listedOrganization), items: itemsSchema(listedOrganization, 'organizations'), ...pageFields });
export const orgMemberList = z.object({ members: z.array(orgMemberSchema), items: itemsSchema(orgMemberSchema, 'members'), ...pageFields });
export const invitationList = z.object({ invitations: z.array(invitationSchema), ...pageFields });
export const createdInvitation = invitationSchema.extend({
  token: z.string().describe('shown only in this answer'),
  accept_url: z.string().describe('POST it, signed in as the invited user, to join'),
});
