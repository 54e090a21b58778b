import type { Principal } from '../auth/principal.ts';
import { DomainError } from '../errors/domainError.ts';
import type { OrganizationStore } from '../domain/organizations/organizationStore.ts';
import type { OrgMembers } from '../domain/organizations/orgMembers.ts';
import type { ProjectMembers } from '../domain/projects/projectMembers.ts';
import type { ProjectRecord } from '../domain/projects/projectRecord.ts';
import type { ProjectStore } from '../domain/projects/projectStore.ts';
import type { OrgRole, ProjectRole } from '../domain/roles.ts';
import {
  keyModeAllows,
  mayAssignOrgRole,
  orgRoleAllows,
  projectRoleAllows,
  type OrgAction,
  type ProjectAction,
} from './permissions.ts';
import { outsideScope } from './contentAccess.ts';
import { pathInScope } from './scope.ts';

export interface ProjectAccess {
  /** Who was let in. */
  principal: Principal;
  project: ProjectRecord;
  /** The user's effective role; null for access keys. */
  role: ProjectRole | null;
  /** The subtree the caller may reach ('' = everything). */
  scope: string;
}

/** A method that may answer with its value or with a promise of it (the stores are moving to an async metadata store). */
type MaybeAsync<F> = F extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> | Promise<Awaited<R>> : never;

/** The domain stores memberships are read through; each may answer synchronously or with a promise. */
export interface MembershipStores {
  organizations: { find: MaybeAsync<OrganizationStore['find']> };
  orgMembers: { roleOf: MaybeAsync<OrgMembers['roleOf']> };
  projects: { find: MaybeAsync<ProjectStore['find']> };
  projectMembers: {
    effectiveRole: MaybeAsync<ProjectMembers['effectiveRole']>;
    projectAndRole: MaybeAsync<ProjectMembers['projectAndRole']>;
  };
}

const isContentAction = (action: ProjectAction) => action === 'content:read' || action === 'content:write';
const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} not found.`);
const forbidden = (message: string) => new DomainError('FORBIDDEN', message);

/**
 * Applies the permission matrix to a caller. Resources the caller has no relation to answer
 * "not found" so that their existence is not revealed; a known resource with too little
 * permission is "forbidden". Throws domain errors, which every surface maps to its own answer.
 */
export class Authorizer {
  constructor(private readonly stores: MembershipStores) {}

  async orgRole(userId: string, orgId: string): Promise<OrgRole | null> {
    return await this.stores.orgMembers.roleOf(orgId, userId);
  }

  async projectRole(userId: string, project: ProjectRecord): Promise<ProjectRole | null> {
    return await this.stores.projectMembers.effectiveRole(project, userId);
  }

  /** An organization route: only users who belong to it; keys never manage organizations. */
  async requireOrg(principal: Principal, orgId: string, action: OrgAction): Promise<OrgRole> {
    if (principal.kind !== 'user') throw forbidden('Access keys cannot manage organizations.');
    const exists = await this.stores.organizations.find(orgId);
    const role = exists ? await this.orgRole(principal.id, orgId) : null;
    if (!role) throw notFound('Organization');
    if (!orgRoleAllows(role, action)) throw forbidden(`Your role (${role}) in this organization does not allow ${action}.`);
    return role;
  }

  /**
   * Granting, changing or taking away an organization role (invitations, role changes,
   * removals), by a caller whose role the route found allows the action: only owners touch the
   * owner role.
   */
  requireOrgRoleAssignment(role: OrgRole, targetCurrent: OrgRole | null, targetNew: OrgRole | null): void {
    if (!mayAssignOrgRole(role, targetCurrent, targetNew)) {
      throw forbidden('Only an owner can grant, change or remove the owner role.');
    }
  }

  /** A project route; with `path`, a key must also hold that path inside its scope. */
  async requireProject(principal: Principal, projectId: string, action: ProjectAction, path?: string): Promise<ProjectAccess> {
    if (principal.kind === 'key') {
      const project = await this.stores.projects.find(projectId);
      const c = principal.connection;
      if (!project || c.project_id !== projectId) throw notFound('Project');
      if (c.kind === 'agent' && !principal.agentAccess && isContentAction(action)) {
        throw forbidden("An agent's key reaches content only through the agent's accesses: chat with it (POST /agents).");
      }
      if (!keyModeAllows(c.mode, action)) {
        throw forbidden(c.mode === 'read' ? 'This access key is read-only.' : `Access keys cannot perform ${action}.`);
      }
      if (path !== undefined && !pathInScope(c.scope_path, path)) throw outsideScope(c.scope_path);
      return { principal, project, role: null, scope: c.scope_path };
    }
    const { project, role } = (await this.stores.projectMembers.projectAndRole(projectId, principal.id)) ?? { project: null, role: null };
    if (!project || !role) throw notFound('Project');
    if (!projectRoleAllows(role, action)) throw forbidden(`Your role (${role}) on this project does not allow ${action}.`);
    return { principal, project, role, scope: '' };
  }

  /** Requires a signed-in user (not an access key). */
  requireUser(principal: Principal): Extract<Principal, { kind: 'user' }> {
    if (principal.kind !== 'user') throw forbidden('This operation needs a user sign-in, not an access key.');
    return principal;
  }

  /** Requires a signed-in administrator of the service (`users.is_admin`): not another user, not an access key. */
  requireAdmin(principal: Principal): Extract<Principal, { kind: 'user' }> {
    if (principal.kind !== 'user' || principal.user.is_admin !== 1) throw forbidden('This operation needs an administrator of the service.');
    return principal;
  }
}
