import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().trim().max(2000);
const orgRole = z.enum(['owner', 'admin', 'member', 'viewer']);

export const listOrganizationsQuery = paginationQuery;

export const createOrganizationBody = z.object({ name, description: description.optional() });

export const updateOrganizationBody = z.object({ name: name.optional(), description: description.optional() });

export const orgRoleBody = z.object({ role: orgRole });

export const inviteBody = z.object({
  email: z.string().trim().email().max(320),
  role: orgRole.default('member'),
});
