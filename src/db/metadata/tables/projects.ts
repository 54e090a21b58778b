/** Projects (migration 001), as far as the stores on the metadata store read them so far. */
export interface ProjectsTables {
  projects: ProjectsTable;
}

/** Only what other tables' queries refer to, until the projects' store moves here. */
export interface ProjectsTable {
  id: string;
}
