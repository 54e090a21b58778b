import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().trim().max(2000);
const projectRole = z.enum(['admin', 'editor', 'viewer']);

export const listProjectsQuery = paginationQuery.extend({ org_id: z.string().min(1).optional() });

export const createProjectBody = z.object({ name, description: description.optional(), org_id: z.string().min(1) });

export const updateProjectBody = z.object({ name: name.optional(), description: description.optional() });

/** A member is named by id or by email (exactly one). */
export const addProjectMemberBody = z
  .object({
    user_id: z.string().min(1).optional(),
    email: z.string().trim().email().optional(),
    role: projectRole,
  })
  .refine((b) => (b.user_id === undefined) !== (b.email === undefined), {
    message: 'give either user_id or email',
    path: ['user_id'],
  });

export const projectRoleBody = z.object({ role: projectRole });

export const projectParams = z.object({ project_id: z.string().min(1) });
export const memberParams = projectParams.extend({ user_id: z.string().min(1) });
