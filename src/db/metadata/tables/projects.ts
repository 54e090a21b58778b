import type { ProjectRecord } from '../../../domain/projects/projectRecord.ts';

/** Projects (migration 001); their members are in auth.ts with the other memberships. */
export interface ProjectsTables {
  projects: ProjectRecord;
}
