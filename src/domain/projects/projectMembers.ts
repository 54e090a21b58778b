import { nowIso } from '../../util/ids.ts';
import type { Db } from '../../db/database.ts';
import { statementCache } from '../../db/statements.ts';
import { FreshCache } from '../../db/freshCache.ts';
import { effectiveProjectRole, type OrgRole, type ProjectRole } from '../roles.ts';
import { DomainError } from '../../errors/domainError.ts';
import type { Page, Paged } from '../pagination.ts';
import type { ProjectRecord } from './projectRecord.ts';
import type { ProjectMemberView } from './projectView.ts';

interface MemberRow {
  user_id: string;
  email: string;
  display_name: string;
  org_role: OrgRole | null;
  project_role: ProjectRole | null;
}

/**
 * Who has a role on a project: everyone of its organization (by inheritance) plus users with
 * an explicit project role, who may come from outside the organization.
 */
export class ProjectMembers {
  private readonly sql: ReturnType<typeof statementCache>;
  /** projectAndRole by project and user: it runs on every project request of a user. */
  private readonly projectRoles: FreshCache<string, { project: ProjectRecord; role: ProjectRole | null }>;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
    this.projectRoles = new FreshCache(db, 10_000, ({ project, role }) => ({ project: { ...project }, role }));
  }

  /** The user's effective role on the project; both memberships in one look-up, as this runs on every content request. */
  effectiveRole(project: ProjectRecord, userId: string): ProjectRole | null {
    const row = this.sql(
      `SELECT (SELECT role FROM org_members WHERE org_id = ? AND user_id = ?) AS org_role,
              (SELECT role FROM project_members WHERE project_id = ? AND user_id = ?) AS project_role`,
    ).get(project.org_id, userId, project.id, userId) as { org_role: OrgRole | null; project_role: ProjectRole | null };
    return effectiveProjectRole(row.org_role, row.project_role);
  }

  /**
   * A project and the user's effective role on it in one statement: what effectiveRole answers
   * after ProjectStore.find, for the authorizer, which asks both on every content request of a
   * user (each statement is a read transaction of its own). Null when there is no such project.
   */
  projectAndRole(projectId: string, userId: string): { project: ProjectRecord; role: ProjectRole | null } | null {
    return this.projectRoles.get(`${projectId}\0${userId}`, () => this.readProjectAndRole(projectId, userId)) ?? null;
  }

  private readProjectAndRole(projectId: string, userId: string): { project: ProjectRecord; role: ProjectRole | null } | undefined {
    const row = this.sql(
      `SELECT p.*, (SELECT role FROM org_members WHERE org_id = p.org_id AND user_id = ?) AS cns_org_role,
              (SELECT role FROM project_members WHERE project_id = p.id AND user_id = ?) AS cns_project_role
       FROM projects p WHERE p.id = ?`,
    ).get(userId, userId, projectId) as (ProjectRecord & { cns_org_role: OrgRole | null; cns_project_role: ProjectRole | null }) | undefined;
    if (!row) return undefined;
    const { cns_org_role, cns_project_role, ...project } = row;
    return { project, role: effectiveProjectRole(cns_org_role, cns_project_role) };
  }

  list(project: ProjectRecord, page: Page): Paged<ProjectMemberView> {
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} ${FROM} ORDER BY u.email LIMIT @limit OFFSET @offset`)
      .all({ projectId: project.id, orgId: project.org_id, limit: page.limit, offset: page.offset }) as MemberRow[];
    const { n } = this.db.prepare(`SELECT COUNT(*) AS n ${FROM}`).get({ projectId: project.id, orgId: project.org_id }) as { n: number };
    return { items: rows.map(toView), total: n };
  }

  get(project: ProjectRecord, userId: string): ProjectMemberView | undefined {
    const row = this.db
      .prepare(`SELECT ${COLUMNS} ${FROM} AND u.id = @userId`)
      .get({ projectId: project.id, orgId: project.org_id, userId }) as MemberRow | undefined;
    return row ? toView(row) : undefined;
  }

  /** Gives a user an explicit role; a user who already has one is changed through setRole instead. */
  add(project: ProjectRecord, userId: string, role: ProjectRole): ProjectMemberView {
    const existing = this.db.prepare('SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?').get(project.id, userId);
    if (existing) throw new DomainError('CONFLICT', 'The user already has a role on this project; change it instead.');
    this.db.prepare('INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').run(project.id, userId, role, nowIso());
    return this.get(project, userId)!;
  }

  /** Sets the explicit role of a member (an organization member gets an explicit role on top of the inherited one). */
  setRole(project: ProjectRecord, userId: string, role: ProjectRole): ProjectMemberView {
    if (!this.get(project, userId)) throw new DomainError('NOT_FOUND', 'Member not found.');
    this.db
      .prepare(
        `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (project_id, user_id) DO UPDATE SET role = excluded.role`,
      )
      .run(project.id, userId, role, nowIso());
    return this.get(project, userId)!;
  }

  /** Removes the explicit role; a role inherited from the organization stays (it is changed there). */
  remove(project: ProjectRecord, userId: string): void {
    const result = this.db.prepare('DELETE FROM project_members WHERE project_id = ? AND user_id = ?').run(project.id, userId);
    if (result.changes === 0) {
      const inherited = this.get(project, userId);
      throw inherited
        ? new DomainError('CONFLICT', 'This member’s role comes from the organization; change or remove it there.', { reason: 'inherited' })
        : new DomainError('NOT_FOUND', 'Member not found.');
    }
  }
}

const COLUMNS = 'u.id AS user_id, u.email, u.display_name, om.role AS org_role, pm.role AS project_role';
const FROM = `FROM users u
  LEFT JOIN org_members om ON om.user_id = u.id AND om.org_id = @orgId
  LEFT JOIN project_members pm ON pm.user_id = u.id AND pm.project_id = @projectId
  WHERE (om.role IS NOT NULL OR pm.role IS NOT NULL)`;

function toView(row: MemberRow): ProjectMemberView {
  return {
    user_id: row.user_id,
    email: row.email,
    display_name: row.display_name,
    role: effectiveProjectRole(row.org_role, row.project_role)!,
    project_role: row.project_role,
    org_role: row.org_role,
  };
}
