/**
 * The roles a user holds: in an organization, and in a project. What each role may do is the
 * policies' business (src/policies/permissions.ts); here are only the roles and how they combine.
 *
 * Organization roles give a project role on every project of the organization (owner/admin →
 * admin, member → editor, viewer → viewer); an explicit project role can only raise it.
 */
export const orgRoles = ['owner', 'admin', 'member', 'viewer'] as const;
export const projectRoles = ['admin', 'editor', 'viewer'] as const;

export type OrgRole = (typeof orgRoles)[number];
export type ProjectRole = (typeof projectRoles)[number];

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

export const isHigherOrgRole = (a: OrgRole, b: OrgRole): boolean => orgRank[a] > orgRank[b];
