import { actorOf, type Principal } from '../auth/principal.ts';
import type { NodeInfo, TrashItem } from '../content/types.ts';
import { DomainError } from '../errors/domainError.ts';
import type { ProjectRole } from '../domain/roles.ts';
import type { ProjectAccess } from './authorize.ts';
import type { ContentAction } from './permissions.ts';
import { pathAboveScope, pathInScope } from './scope.ts';

export type { ContentAction };

/**
 * What a principal holds on one project's content: the subtree it may reach ('' = all of it)
 * and whether it may write there. Users reach the whole project with their role; access keys
 * and every connection built on them (agents, MCP endpoints, sandboxes, syncs) reach their
 * scope path with their mode.
 */
export interface ContentGrant {
  principal: Principal;
  projectId: string;
  /** The user's effective role; null for keys. */
  role: ProjectRole | null;
  scope: string;
  action: ContentAction;
  /** The actor recorded on versions written with this grant. */
  actor: ReturnType<typeof actorOf>;
}

/** How a folder may be listed: everything, or only the way down to the grant's scope. */
export type Listing = 'all' | 'way-down';

/** What the project-level check answers: the principal's role (null for keys) and scope. */
export interface ProjectGateAnswer {
  role: ProjectRole | null;
  scope: string;
}

/** The project-level check: the permission matrix applied to the principal's memberships or key. */
export interface ProjectGate {
  requireProject(principal: Principal, projectId: string, action: ContentAction): ProjectGateAnswer | Promise<ProjectGateAnswer>;
}

/**
 * The one content-access policy every surface asks: may this principal read or write this path,
 * this node, these paths; which children of a folder and which trash items it may see. Things
 * the caller has no relation to are "not found" (their existence is not revealed); a known
 * thing outside the caller's scope or mode is "forbidden". Throws domain errors; the HTTP layer
 * (or MCP, or the git remote) maps them to its own answers.
 */
export class ContentAccess {
  constructor(private readonly gate: ProjectGate) {}

  /** The grant for `action` on a project (404 for projects the principal cannot see). */
  async grant(principal: Principal, projectId: string, action: ContentAction): Promise<ContentGrant> {
    const { role, scope } = await this.gate.requireProject(principal, projectId, action);
    return { principal, projectId, role, scope, action, actor: actorOf(principal) };
  }

  /** The grant, requiring every path to lie inside the scope. */
  async grantPaths(principal: Principal, projectId: string, action: ContentAction, paths: readonly string[]): Promise<ContentGrant> {
    const g = await this.grant(principal, projectId, action);
    for (const p of paths) this.requirePath(g, p);
    return g;
  }

  mayPath(g: ContentGrant, path: string): boolean {
    return pathInScope(g.scope, path);
  }

  requirePath(g: ContentGrant, path: string): void {
    if (!this.mayPath(g, path)) throw outsideScope(g.scope);
  }

  /** A node counts at its path, a trashed node at the path it was deleted from. */
  mayNode(g: ContentGrant, node: NodeInfo): boolean {
    if (node.projectId !== g.projectId) return false;
    const path = node.state === 'active' ? node.path : node.originalPath;
    return path === null ? g.scope === '' : pathInScope(g.scope, path);
  }

  requireNode(g: ContentGrant, node: NodeInfo): void {
    if (node.projectId !== g.projectId) throw new DomainError('NOT_FOUND', 'Node not found.');
    if (!this.mayNode(g, node)) throw outsideScope(g.scope);
  }

  /**
   * A node looked up by id for `action`: unknown ids, nodes of projects the principal cannot see
   * and nodes of another project than the one the client named are all "not found".
   */
  async node(principal: Principal, node: NodeInfo | null, action: ContentAction, projectId?: string): Promise<ContentGrant> {
    if (!node || (projectId !== undefined && node.projectId !== projectId)) throw new DomainError('NOT_FOUND', 'Node not found.');
    let g: ContentGrant;
    try {
      g = await this.grant(principal, node.projectId, action);
    } catch (e) {
      if (e instanceof Error && 'code' in e && e.code === 'NOT_FOUND') throw new DomainError('NOT_FOUND', 'Node not found.');
      throw e;
    }
    this.requireNode(g, node);
    return g;
  }

  /** Listing a folder above a scope shows only the way down to it; beside the scope, nothing. */
  listing(g: ContentGrant, folderPath: string): Listing {
    if (pathInScope(g.scope, folderPath)) return 'all';
    if (pathAboveScope(g.scope, folderPath)) return 'way-down';
    throw outsideScope(g.scope);
  }

  /** A path inside the scope or on the way down to it (a folder above it). */
  onTheWay(g: ContentGrant, path: string): boolean {
    return pathInScope(g.scope, path) || pathAboveScope(g.scope, path);
  }

  /** The children of a folder the grant may see (all of them, or the way down to the scope). */
  visibleChildren<N extends Pick<NodeInfo, 'path'>>(g: ContentGrant, folderPath: string, children: readonly N[]): N[] {
    if (this.listing(g, folderPath) === 'all') return [...children];
    return children.filter((c) => this.onTheWay(g, c.path));
  }

  /** Trash items deleted from inside the scope (a scoped grant never sees items whose origin is unknown). */
  visibleTrash(g: ContentGrant, items: readonly TrashItem[]): TrashItem[] {
    if (g.scope === '') return [...items];
    return items.filter((i) => i.originalPath !== null && pathInScope(g.scope, i.originalPath));
  }

  /** Operations on the whole tree (project rollback, clone, push) need a grant over the whole project. */
  requireWholeProject(g: ContentGrant, what: string): void {
    if (g.scope !== '') throw new DomainError('FORBIDDEN', `${outsideScope(g.scope).message} ${what} needs a key whose scope is the whole project.`);
  }
}

/**
 * The content grant of a project check already made for `action` (a route's declared `project`
 * or `resource` check on content:read or content:write): the same question `grant` asks, so the
 * same answer, without asking again.
 */
export function grantOf(access: Pick<ProjectAccess, 'principal' | 'project' | 'role' | 'scope'>, action: ContentAction): ContentGrant {
  return { principal: access.principal, projectId: access.project.id, role: access.role, scope: access.scope, action, actor: actorOf(access.principal) };
}

/** The one message for a path outside a scope, whatever the surface. */
export function outsideScope(scope: string): DomainError {
  return new DomainError('FORBIDDEN', `This access key is limited to "${scope}".`, { scope });
}
