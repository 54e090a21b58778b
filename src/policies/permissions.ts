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
 * An agent's key (a connection of kind agent) is a key whose content reach is its accesses: on
 * its own it holds project:read only; acting through an access, the key carries that access's
 * subtree and mode (authorize.ts).
 *
 * Roles and how an organization role carries over to its projects live in the domain
 * (src/domain/roles.ts); this file holds only the grants.
 */
import type { OrgRole, ProjectRole } from '../domain/roles.ts';

export type ProjectAction = 'project:read' | 'content:read' | 'content:write' | 'project:update' | 'project:delete' | 'members:manage' | 'keys:manage';
/** The two actions of the content door (contentAccess.ts). */
export type ContentAction = Extract<ProjectAction, 'content:read' | 'content:write'>;
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

