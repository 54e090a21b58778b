import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import { actorOf, type Principal } from '../../auth/principal.ts';
import type { Actor, NodeInfo } from '../../content/contentStore.ts';
import { AppError, forbidden, notFound, validationError } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import type { ProjectAction } from '../../policies/permissions.ts';
import { pathAboveScope, pathInScope } from '../../policies/scope.ts';

/** An authorized caller on one project. */
export interface Caller {
  principal: Principal;
  projectId: string;
  /** The subtree an access key is limited to ('' = the whole project). */
  scope: string;
  actor: Actor;
}

/**
 * Authorization of the id surface: the project's permission matrix plus, for access keys, their
 * scope path applied to the node's path (a trashed node counts at the path it was deleted from).
 * Nodes in projects the caller cannot reach answer 404, like unknown ids, so ids reveal nothing.
 */
export class NodeGuard {
  constructor(private readonly s: Services) {}

  project(ctx: Context, projectId: string, action: ProjectAction): Caller {
    const principal = principalOf(ctx);
    const access = this.s.authorizer.requireProject(principal, projectId, action);
    return { principal, projectId, scope: access.scope, actor: actorOf(principal) };
  }

  /** The node with `id` for `action`; `projectId` (when the client sent one) must be its project. */
  node(ctx: Context, id: string, action: ProjectAction, projectId?: string): { node: NodeInfo; caller: Caller } {
    const found = this.s.content.findById(id);
    if (!found || (projectId !== undefined && found.projectId !== projectId)) throw notFound('Node');
    let caller: Caller;
    try {
      caller = this.project(ctx, found.projectId, action);
    } catch (e) {
      if (e instanceof AppError && e.code === 'NOT_FOUND') throw notFound('Node');
      throw e;
    }
    this.requireNode(caller, found);
    return { node: found, caller };
  }

  /** The parent folder a new node goes into (the root when `parentId` is absent). */
  parent(caller: Caller, parentId: string | null | undefined): { id: string | null; path: string } {
    if (parentId === null || parentId === undefined) return { id: null, path: '' };
    const folder = this.s.content.findById(parentId);
    if (!folder || folder.projectId !== caller.projectId) throw notFound('Parent folder');
    if (folder.type !== 'folder') throw validationError('parent_id is not a folder.', [{ field: 'parent_id', message: 'not a folder' }]);
    if (folder.state !== 'active') throw validationError('parent_id is in the trash.', [{ field: 'parent_id', message: 'in the trash' }]);
    return { id: folder.id, path: folder.path };
  }

  mayRead(caller: Caller, node: NodeInfo): boolean {
    const path = visiblePath(node);
    return path === null ? caller.scope === '' : pathInScope(caller.scope, path);
  }

  requireNode(caller: Caller, node: NodeInfo): void {
    if (!this.mayRead(caller, node)) throw forbidden(`This access key is limited to "${caller.scope}".`);
  }

  requirePath(caller: Caller, path: string): void {
    if (!pathInScope(caller.scope, path)) throw forbidden(`This access key is limited to "${caller.scope}".`);
  }

  /** Listing a folder above a key's scope shows only the way down to it. */
  mayList(caller: Caller, folderPath: string): 'all' | 'way-down' {
    if (pathInScope(caller.scope, folderPath)) return 'all';
    if (pathAboveScope(caller.scope, folderPath)) return 'way-down';
    throw forbidden(`This access key is limited to "${caller.scope}".`);
  }

  onTheWayDown(caller: Caller, node: NodeInfo): boolean {
    return pathInScope(caller.scope, node.path) || pathAboveScope(caller.scope, node.path);
  }
}

/** Where a node counts for scopes: its path, or for a trashed node the path it was deleted from. */
function visiblePath(node: NodeInfo): string | null {
  if (node.state === 'active') return node.path;
  return node.originalPath;
}
