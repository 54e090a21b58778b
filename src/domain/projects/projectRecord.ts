import type { ProjectsTable } from '../../db/metadata/tables/projects.ts';

/** A project as stored: its columns are the data-access layer's. */
export type ProjectRecord = ProjectsTable;
