/**
 * The permission matrix: the single place that says which role may do what. Routes ask
 * `authorize.ts`, which applies this table to the caller's memberships and key.
 *
 * | action              | org owner | org admin | org member | org viewer | prj admin | prj editor | prj viewer | key read | key read_write |
 * |---------------------|-----------|-----------|------------|------------|-----------|------------|------------|----------|---------------|
 * | project:read        | yes       | yes       | yes        | yes        | yes       | yes        | yes        | yes      | yes           |
 * | content:read        | yes       | yes       | yes        | yes        | yes       | yes        | yes        | in scope | in scope      |
 * | content:write       | yes       | yes       | yes        | no         | yes       | yes        | no         | no       | in scope      |
 * | project:update      | yes       | yes       | no         | no         | yes       | no         | no         | no       | no            |
 * | project:delete      | yes       | yes       | no         | no         | yes       | no         | no         | no       | no            |
 * | members:manage      | yes       | yes       | no         | no         | yes       | no         | no         | no       | no            |
 * | keys:manage         | yes       | yes       | no         | no         | yes       | no         | no         | no       | no            |
 * | project:create      | yes       | yes       | yes        | no         |           |            |            | no       | no            |
 * | org:read            | yes       | yes       | yes        | yes        |           |            |            | no       | no            |
 * | org:update          | yes       | yes       | no         | no         |           |            |            | no       | no            |
 * | org:invite          | yes       | yes (not owners) | no  | no         |           |            |            | no       | no            |
 * | org:members:manage  | yes       | yes (not owners) | no  | no         |           |            |            | no       | no            |
 * | org:delete          | yes       | no        | no         | no         |           |            |            | no       | no            |
 *
 * Organization roles give a project role on every project of the organization (owner/admin →
 * admin, member → editor, viewer → viewer); an explicit project role can only raise it.
 */
export type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';
export type ProjectRole = 'admin' | 'editor' | 'viewer';

export const orgRoles: readonly OrgRole[] = ['owner', 'admin', 'member', 'viewer'];
export const projectRoles: readonly ProjectRole[] = ['admin', 'editor', 'viewer'];

export type ProjectAction = 'project:read' | 'content:read' | 'content:write' | 'project:update' | 'project:delete' | 'members:manage' | 'keys:manage';
export type OrgAction = 'org:read' | 'org:update' | 'org:delete' | 'org:members:manage' | 'org:invite' | 'project:create';

const projectGrants: Record<ProjectRole, readonly ProjectAction[]> = {
  admin: ['project:read', 'content:read', 'content:write', 'project:update', 'project:delete', 'members:manage', 'keys:manage'],
  editor: ['project:read', 'content:read', 'content:write'],
  viewer: ['project:read', 'content:read'],
};

const orgGrants: Record<OrgRole, readonly OrgAction[]> = {
  owner: ['org:read', 'org:update', 'org:delete', 'org:members:manage', 'org:invite', 'project:create'],
  admin: ['org:read', 'org:update', 'org:members:manage', 'org:invite', 'project:create'],
  member: ['org:read', 'project:create'],
  viewer: ['org:read'],
};

/** What an access key may do inside its project, by mode (scope is checked separately). */
const keyGrants: Record<'read' | 'read_write', readonly ProjectAction[]> = {
  read: ['project:read', 'content:read'],
  read_write: ['project:read', 'content:read', 'content:write'],
};

const projectRank: Record<ProjectRole, number> = { viewer: 1, editor: 2, admin: 3 };
const orgRank: Record<OrgRole, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

export function projectRoleFromOrgRole(role: OrgRole): ProjectRole {
  return role === 'owner' || role === 'admin' ? 'admin' : role === 'member' ? 'editor' : 'viewer';
}

/** The stronger of the role inherited from the organization and the explicit project role. */
export function effectiveProjectRole(orgRole: OrgRole | null, projectRole: ProjectRole | null): ProjectRole | null {
  const inherited = orgRole ? projectRoleFromOrgRole(orgRole) : null;
  if (!inherited) return projectRole;
  if (!projectRole) return inherited;
  return projectRank[projectRole] > projectRank[inherited] ? projectRole : inherited;
}

export const projectRoleAllows = (role: ProjectRole, action: ProjectAction): boolean => projectGrants[role].includes(action);
export const orgRoleAllows = (role: OrgRole, action: OrgAction): boolean => orgGrants[role].includes(action);
export const keyModeAllows = (mode: 'read' | 'read_write', action: ProjectAction): boolean => keyGrants[mode].includes(action);

/** Admins manage members but may not touch owners or make anyone an owner; owners may do anything. */
export function mayAssignOrgRole(actor: OrgRole, targetCurrent: OrgRole | null, targetNew: OrgRole | null): boolean {
  if (actor === 'owner') return true;
  if (actor !== 'admin') return false;
  if (targetCurrent === 'owner' || targetNew === 'owner') return false;
  return true;
}

export const isHigherOrgRole = (a: OrgRole, b: OrgRole): boolean => orgRank[a] > orgRank[b];
