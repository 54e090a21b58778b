/** Projects (migration 001); their members are in auth.ts with the other memberships. */
export interface ProjectsTables {
  projects: ProjectsTable;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  name: string;
  description: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
