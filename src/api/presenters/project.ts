import { z } from 'zod';
import type { ProjectRecord } from '../../domain/projects/projectRecord.ts';
import type { ProjectMemberView } from '../../domain/projects/projectView.ts';
import { projectRoles, type ProjectRole } from '../../domain/roles.ts';

const projectRole = z.enum(projectRoles);

/** A project with the caller's effective role (null when the caller is an access key). */
export function presentProject(p: ProjectRecord, role: ProjectRole | null) {
  return {
    id: p.id,
    org_id: p.org_id,
    name: p.name,
    description: p.description,
    created_by: p.created_by,
    created_at: p.created_at,
    updated_at: p.updated_at,
    role,
  };
}

export const projectSchema = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  role: projectRole.nullable().describe("the caller's effective role; null for an access key"),
});

export function presentProjectMember(m: ProjectMemberView) {
  return {
    user_id: m.user_id,
    email: m.email,
    display_name: m.display_name,
    role: m.role,
    project_role: m.project_role,
    org_role: m.org_role,
  };
}

export const projectMemberSchema = z.object({
  user_id: z.string(),
  email: z.string(),
  display_name: z.string(),
  role: projectRole.describe('the effective role: the stronger of the inherited and the explicit one'),
  project_role: projectRole.nullable(),
  org_role: z.string().nullable(),
});
