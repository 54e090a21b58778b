import type { ProjectRole } from '../roles.ts';
import type { ProjectRecord } from './projectRecord.ts';

/** A project as one caller sees it: with the role the permission matrix gives them (null for access keys). */
export interface ProjectView extends ProjectRecord {
  role: ProjectRole | null;
}

export interface ProjectMemberView {
  user_id: string;
  email: string;
  display_name: string;
  /** The effective role: the stronger of the inherited and the explicit one. */
  role: ProjectRole;
  project_role: ProjectRole | null;
  org_role: string | null;
}
