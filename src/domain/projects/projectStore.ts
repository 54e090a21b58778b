import { newId, nowIso } from '../../util/ids.ts';
import { MetadataCache } from '../../db/metadata/metadataCache.ts';
import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { effectiveProjectRole } from '../roles.ts';
import { defined } from '../defined.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ProjectRecord } from './projectRecord.ts';
import type { ProjectRepositories } from './projectRepository.ts';
import type { ProjectView } from './projectView.ts';

export interface NewProject {
  orgId: string;
  name: string;
  description?: string;
  createdBy: string | null;
}

/** Projects: their records and the content repository that lives and dies with each one. */
export class ProjectStore {
  /** find runs on every project request of an access key. */
  private readonly byId: MetadataCache<string, ProjectRecord>;

  constructor(
    private readonly metadata: MetadataStore,
    private readonly repositories: ProjectRepositories,
  ) {
    this.byId = new MetadataCache(metadata.changes, 10_000);
  }

  /** The row goes first (content storage may refer to it); if the repository cannot be made, the row goes again. */
  async create(input: NewProject): Promise<ProjectRecord> {
    const project = await this.insert(this.metadata.db, input);
    await this.attachRepository(project.id, () => this.metadata.db.deleteFrom('projects').where('id', '=', project.id).execute());
    return project;
  }

  /** Inserts the row only, within the caller's transaction; the caller attaches the repository after its commit. */
  async insert(trx: MetadataDb, input: NewProject): Promise<ProjectRecord> {
    const now = nowIso();
    const project: ProjectRecord = {
      id: newId('prj'),
      org_id: input.orgId,
      name: input.name,
      description: input.description ?? '',
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('projects').values(project).execute();
    return project;
  }

  /** Creates the content repository of an inserted project; on failure runs `undo` and rethrows. */
  async attachRepository(projectId: string, undo: () => Promise<unknown>): Promise<void> {
    try {
      await this.repositories.createProject(projectId);
    } catch (err) {
      await this.repositories.deleteProject(projectId).catch(() => undefined);
      await undo();
      throw err;
    }
  }

  /** On every content request of a key: kept while no cached table changed. */
  find(id: string): Promise<ProjectRecord | undefined> {
    return this.byId.get(id, () => this.metadata.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /** The oldest project of an organization (the "first project" of a default organization). */
  firstOf(orgId: string): Promise<ProjectRecord | undefined> {
    return this.metadata.db.selectFrom('projects').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  }

  /** Projects the user reaches through an organization role or an explicit project role. */
  async listVisible(userId: string, orgId: string | undefined, page: Page): Promise<Paged<ProjectView>> {
    const visible = this.metadata.db
      .selectFrom('projects as p')
      .leftJoin('org_members as om', (j) => j.onRef('om.org_id', '=', 'p.org_id').on('om.user_id', '=', userId))
      .leftJoin('project_members as pm', (j) => j.onRef('pm.project_id', '=', 'p.id').on('pm.user_id', '=', userId))
      .where((eb) => eb.or([eb('om.role', 'is not', null), eb('pm.role', 'is not', null)]))
      .$if(orgId !== undefined, (qb) => qb.where('p.org_id', '=', orgId!));
    // The total rides along on each row (a window count): one round trip to the database, not two.
    const rows = await visible
      .selectAll('p')
      .select(['om.role as org_role', 'pm.role as project_role', (eb) => eb.fn.countAll<number>().over().as('cns_total')])
      .orderBy('p.created_at')
      .orderBy('p.id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    // A page past the end has no row to carry it.
    const n = rows.length > 0 ? rows[0]!.cns_total : (await visible.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    const items = rows.map(({ org_role, project_role, cns_total: _total, ...project }) => ({ ...project, role: effectiveProjectRole(org_role, project_role) }));
    return { items, total: Number(n) };
  }

  async update(id: string, changes: { name?: string; description?: string }): Promise<ProjectRecord> {
    const current = await this.find(id);
    if (!current) throw new DomainError('NOT_FOUND', 'Project not found.');
    // Only the named columns: a rename and a new description at once both stay.
    const updated = await this.metadata.db.updateTable('projects').set({ ...defined({ name: changes.name, description: changes.description }), updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst();
    if (!updated) throw new DomainError('NOT_FOUND', 'Project not found.');
    return updated;
  }

  /**
   * Permanent: the content goes first, so a failure leaves the project in place and the
   * deletion can be retried, rather than leaving data behind that nothing points to.
   */
  async delete(id: string): Promise<void> {
    await this.repositories.deleteProject(id);
    await this.metadata.db.deleteFrom('projects').where('id', '=', id).execute();
    await this.repositories.deleted?.(id);
  }
}
