import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import type { NodeInfo } from '../../content/contentStore.ts';
import { notFound, validationError } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import type { ContentAction, ContentGrant, Listing } from '../../policies/contentAccess.ts';

/** An authorized caller on one project: the content-access policy's grant. */
export type Caller = ContentGrant;

/**
 * The id surface's adapter over the one content-access policy (src/policies/contentAccess.ts):
 * it takes the principal from the request and asks the policy. Nodes in projects the caller
 * cannot reach answer 404, like unknown ids, so ids reveal nothing.
 */
export class NodeGuard {
  constructor(private readonly s: Services) {}

  project(ctx: Context, projectId: string, action: ContentAction): Caller {
    return this.s.access.grant(principalOf(ctx), projectId, action);
  }

  /** The node with `id` for `action`; `projectId` (when the client sent one) must be its project. */
  node(ctx: Context, id: string, action: ContentAction, projectId?: string): { node: NodeInfo; caller: Caller } {
    const node = this.s.content.findById(id);
    const caller = this.s.access.node(principalOf(ctx), node, action, projectId);
    return { node: node!, caller };
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
    return this.s.access.mayNode(caller, node);
  }

  requireNode(caller: Caller, node: NodeInfo): void {
    this.s.access.requireNode(caller, node);
  }

  requirePath(caller: Caller, path: string): void {
    this.s.access.requirePath(caller, path);
  }

  /** Listing a folder above a key's scope shows only the way down to it. */
  mayList(caller: Caller, folderPath: string): Listing {
    return this.s.access.listing(caller, folderPath);
  }

  onTheWayDown(caller: Caller, node: NodeInfo): boolean {
    return this.s.access.onTheWay(caller, node.path);
  }
}
