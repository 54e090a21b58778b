import type { Db } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import type { ProjectRecord } from '../domain/projects/projectRecord.ts';
import { forbidden, notFound } from '../http/errors.ts';
import {
  effectiveProjectRole,
  keyModeAllows,
  mayAssignOrgRole,
  orgRoleAllows,
  projectRoleAllows,
  type OrgAction,
  type OrgRole,
  type ProjectAction,
  type ProjectRole,
} from './permissions.ts';
import { pathInScope } from './scope.ts';
import { statementCache } from '../db/statements.ts';

export interface ProjectAccess {
  project: ProjectRecord;
  /** The user's effective role; null for access keys. */
  role: ProjectRole | null;
  /** The subtree the caller may reach ('' = everything). */
  scope: string;
}

/**
 * Applies the permission matrix to a caller. Resources the caller has no relation to answer
 * 404 so that their existence is not revealed; a known resource with too little permission
 * answers 403.
 */
export class Authorizer {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  orgRole(userId: string, orgId: string): OrgRole | null {
    const row = this.sql('SELECT role FROM org_members WHERE org_id = ? AND user_id = ?').get(orgId, userId) as
      | { role: OrgRole }
      | undefined;
    return row?.role ?? null;
  }

  /** The user's effective role; both memberships in one look-up, as this runs on every content request. */
  projectRole(userId: string, project: ProjectRecord): ProjectRole | null {
    const row = this.sql(
      `SELECT (SELECT role FROM org_members WHERE org_id = ? AND user_id = ?) AS org_role,
              (SELECT role FROM project_members WHERE project_id = ? AND user_id = ?) AS project_role`,
    ).get(project.org_id, userId, project.id, userId) as { org_role: OrgRole | null; project_role: ProjectRole | null };
    return effectiveProjectRole(row.org_role, row.project_role);
  }

  /** An organization route: only users who belong to it; keys never manage organizations. */
  requireOrg(principal: Principal, orgId: string, action: OrgAction): OrgRole {
    if (principal.kind !== 'user') throw forbidden('Access keys cannot manage organizations.');
    const exists = this.sql('SELECT 1 FROM organizations WHERE id = ?').get(orgId);
    const role = exists ? this.orgRole(principal.id, orgId) : null;
    if (!role) throw notFound('Organization');
    if (!orgRoleAllows(role, action)) throw forbidden(`Your role (${role}) in this organization does not allow ${action}.`);
    return role;
  }

  /**
   * Granting, changing or taking away an organization role (invitations, role changes,
   * removals): the action itself, plus the rule that only owners touch the owner role.
   */
  requireOrgRoleAssignment(
    principal: Principal,
    orgId: string,
    action: 'org:members:manage' | 'org:invite',
    targetCurrent: OrgRole | null,
    targetNew: OrgRole | null,
  ): OrgRole {
    const role = this.requireOrg(principal, orgId, action);
    if (!mayAssignOrgRole(role, targetCurrent, targetNew)) {
      throw forbidden('Only an owner can grant, change or remove the owner role.');
    }
    return role;
  }

  /** A project route; with `path`, a key must also hold that path inside its scope. */
  requireProject(principal: Principal, projectId: string, action: ProjectAction, path?: string): ProjectAccess {
    const project = this.sql('SELECT * FROM projects WHERE id = ?').get(projectId) as ProjectRecord | undefined;
    if (principal.kind === 'key') {
      const c = principal.connection;
      if (!project || c.project_id !== projectId) throw notFound('Project');
      if (!keyModeAllows(c.mode, action)) {
        throw forbidden(c.mode === 'read' ? 'This access key is read-only.' : `Access keys cannot perform ${action}.`);
      }
      if (path !== undefined && !pathInScope(c.scope_path, path)) {
        throw forbidden(`This access key is limited to "${c.scope_path}".`);
      }
      return { project, role: null, scope: c.scope_path };
    }
    const role = project ? this.projectRole(principal.id, project) : null;
    if (!project || !role) throw notFound('Project');
    if (!projectRoleAllows(role, action)) throw forbidden(`Your role (${role}) on this project does not allow ${action}.`);
    return { project, role, scope: '' };
  }

  /** Requires a signed-in user (not an access key). */
  requireUser(principal: Principal): Extract<Principal, { kind: 'user' }> {
    if (principal.kind !== 'user') throw forbidden('This operation needs a user sign-in, not an access key.');
    return principal;
  }
}
