import type { MetadataDb, MetadataStore } from '../../db/metadata/metadataStore.ts';
import { MetadataCache } from '../../db/metadata/metadataCache.ts';
import { nowIso } from '../../util/ids.ts';
import { effectiveProjectRole, type OrgRole, type ProjectRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ProjectRecord } from './projectRecord.ts';
import type { ProjectMemberView } from './projectView.ts';

type ProjectAndRole = { project: ProjectRecord; role: ProjectRole | null };

/**
 * Who has a role on a project: everyone of its organization (by inheritance) plus users with
 * an explicit project role, who may come from outside the organization.
 */
export class ProjectMembers {
  /** projectAndRole by project and user: it runs on every project request of a user. */
  private readonly projectRoles: MetadataCache<string, ProjectAndRole>;

  constructor(private readonly metadata: MetadataStore) {
    this.projectRoles = new MetadataCache(metadata.changes, 10_000, ({ project, role }) => ({ project: { ...project }, role }));
  }

  /** The user's effective role on the project; both memberships in one look-up, as this runs on every content request. */
  async effectiveRole(project: ProjectRecord, userId: string): Promise<ProjectRole | null> {
    const db = this.metadata.db;
    const [om, pm] = await Promise.all([
      db.selectFrom('org_members').select('role').where('org_id', '=', project.org_id).where('user_id', '=', userId).executeTakeFirst(),
      db.selectFrom('project_members').select('role').where('project_id', '=', project.id).where('user_id', '=', userId).executeTakeFirst(),
    ]);
    return effectiveProjectRole(om?.role ?? null, pm?.role ?? null);
  }

  /**
   * A project and the user's effective role on it in one statement: what effectiveRole answers
   * after ProjectStore.find, for the authorizer, which asks both on every content request of a
   * user. Null when there is no such project.
   */
  async projectAndRole(projectId: string, userId: string): Promise<ProjectAndRole | null> {
    return (await this.projectRoles.get(`${projectId}\0${userId}`, () => this.readProjectAndRole(projectId, userId))) ?? null;
  }

  private async readProjectAndRole(projectId: string, userId: string): Promise<ProjectAndRole | undefined> {
    const row = await this.metadata.db
      .selectFrom('projects as p')
      .leftJoin('org_members as om', (j) => j.onRef('om.org_id', '=', 'p.org_id').on('om.user_id', '=', userId))
      .leftJoin('project_members as pm', (j) => j.onRef('pm.project_id', '=', 'p.id').on('pm.user_id', '=', userId))
      .selectAll('p')
      .select(['om.role as cns_org_role', 'pm.role as cns_project_role'])
      .where('p.id', '=', projectId)
      .executeTakeFirst();
    if (!row) return undefined;
    const { cns_org_role, cns_project_role, ...project } = row;
    return { project, role: effectiveProjectRole(cns_org_role, cns_project_role) };
  }

  private members(db: MetadataDb, project: ProjectRecord) {
    return db
      .selectFrom('users as u')
      .leftJoin('org_members as om', (j) => j.onRef('om.user_id', '=', 'u.id').on('om.org_id', '=', project.org_id))
      .leftJoin('project_members as pm', (j) => j.onRef('pm.user_id', '=', 'u.id').on('pm.project_id', '=', project.id))
      .where((eb) => eb.or([eb('om.role', 'is not', null), eb('pm.role', 'is not', null)]));
  }

  async list(project: ProjectRecord, page: Page): Promise<Paged<ProjectMemberView>> {
    const members = this.members(this.metadata.db, project);
    const rows = await members.select(COLUMNS).orderBy('u.email').limit(page.limit).offset(page.offset).execute();
    const { n } = await members.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { items: rows.map(toView), total: Number(n) };
  }

  async get(project: ProjectRecord, userId: string, db: MetadataDb = this.metadata.db): Promise<ProjectMemberView | undefined> {
    const row = await this.members(db, project).select(COLUMNS).where('u.id', '=', userId).executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  /** Gives a user an explicit role; a user who already has one is changed through setRole instead. */
  async add(project: ProjectRecord, userId: string, role: ProjectRole): Promise<ProjectMemberView> {
    const inserted = await this.metadata.db
      .insertInto('project_members')
      .values({ project_id: project.id, user_id: userId, role, created_at: nowIso() })
      .onConflict((oc) => oc.columns(['project_id', 'user_id']).doNothing())
      .executeTakeFirst();
    if (!inserted.numInsertedOrUpdatedRows) throw new DomainError('CONFLICT', 'The user already has a role on this project; change it instead.');
    return (await this.get(project, userId))!;
  }

  /** Sets the explicit role of a member (an organization member gets an explicit role on top of the inherited one). */
  setRole(project: ProjectRecord, userId: string, role: ProjectRole): Promise<ProjectMemberView> {
    return this.metadata.transaction(async (trx) => {
      if (!(await this.get(project, userId, trx))) throw new DomainError('NOT_FOUND', 'Member not found.');
      await trx
        .insertInto('project_members')
        .values({ project_id: project.id, user_id: userId, role, created_at: nowIso() })
        .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({ role }))
        .execute();
      return (await this.get(project, userId, trx))!;
    });
  }

  /** Removes the explicit role; a role inherited from the organization stays (it is changed there). */
  async remove(project: ProjectRecord, userId: string): Promise<void> {
    const result = await this.metadata.db.deleteFrom('project_members').where('project_id', '=', project.id).where('user_id', '=', userId).executeTakeFirst();
    if (result.numDeletedRows === 0n) {
      const inherited = await this.get(project, userId);
      throw inherited
        ? new DomainError('CONFLICT', 'This member’s role comes from the organization; change or remove it there.', { reason: 'inherited' })
        : new DomainError('NOT_FOUND', 'Member not found.');
    }
  }
}

const COLUMNS = ['u.id as user_id', 'u.email', 'u.display_name', 'om.role as org_role', 'pm.role as project_role'] as const;

function toView(row: { user_id: string; email: string; display_name: string; org_role: OrgRole | null; project_role: ProjectRole | null }): ProjectMemberView {
  return {
    user_id: row.user_id,
    email: row.email,
    display_name: row.display_name,
    role: effectiveProjectRole(row.org_role, row.project_role)!,
    project_role: row.project_role,
    org_role: row.org_role,
  };
}
