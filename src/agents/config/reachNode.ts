import type { Principal } from '../../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';

export interface ReachDeps {
  content: Pick<ContentStore, 'findById'>;
  access: ContentAccess;
}

/**
 * The node an access or bash tool is given: an active node of the agent's project that the
 * CALLER may reach (404 otherwise: a person cannot hand an agent what they cannot see), or null
 * for the whole project, which needs a caller whose grant covers the whole project.
 */
export async function reachableNode(d: ReachDeps, principal: Principal, projectId: string, nodeId: string | null, folderOnly: string | null): Promise<NodeInfo | null> {
  if (nodeId === null) {
    d.access.requireWholeProject(await d.access.grant(principal, projectId, 'content:read'), 'Giving an agent the whole project');
    return null;
  }
  const node = d.content.findById(nodeId);
  await d.access.node(principal, node, 'content:read', projectId);
  if (node!.state !== 'active') throw new DomainError('NOT_FOUND', 'Node not found.');
  if (folderOnly && node!.type !== 'folder') throw invalidField('node_id', folderOnly);
  return node;
}

/** The node's current path ('' for the whole project), or null once it is gone from the project. */
export function currentPath(d: Pick<ReachDeps, 'content'>, projectId: string, nodeId: string | null): string | null {
  if (nodeId === null) return '';
  const node = d.content.findById(nodeId);
  return node && node.state === 'active' && node.projectId === projectId ? node.path : null;
}
