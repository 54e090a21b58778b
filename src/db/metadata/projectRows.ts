import { sql, type Selectable } from 'kysely';
import type { MetadataDb } from './metadataStore.ts';
import type { MetadataSchema } from './schema.ts';

/** The tables whose rows belong to a project under a name unique in it (database connections, MCP proxy servers…). */
export type NamedInProject = {
  [T in keyof MetadataSchema]: MetadataSchema[T] extends { id: string; project_id: string; name: string; created_at: string } ? T : never;
}[keyof MetadataSchema];

/** The id of the project's row with this name, if any. */
export async function idByName(db: MetadataDb, table: NamedInProject, projectId: string, name: string): Promise<string | null> {
  const r = await db.selectFrom(table).select('id').where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  return r?.id ?? null;
}

/** A page of the project's rows, oldest first (ties by id), and how many there are in all. */
export async function pageOfProject<T extends NamedInProject>(
  db: MetadataDb,
  table: T,
  projectId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: Selectable<MetadataSchema[T]>[]; total: number }> {
  const of = (t: NamedInProject) => db.selectFrom(t).where('project_id', '=', projectId);
  const rows = await of(table).selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute();
  const { n } = await of(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { rows: rows as Selectable<MetadataSchema[T]>[], total: Number(n) };
}

/**
 * The ids of an organization's projects, as a subquery for `where('project_id', 'in', …)`.
 * `projects.org_id` is read through `sql.ref` until the projects' store moves here and its type
 * has the column.
 */
export function projectsOfOrg(db: MetadataDb, orgId: string) {
  return db.selectFrom('projects').select('id').where(sql.ref('org_id'), '=', orgId);
}
