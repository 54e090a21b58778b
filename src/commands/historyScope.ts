import { outsideScope, type ContentGrant } from '../policies/contentAccess.ts';
import { pathInScope } from '../policies/scope.ts';

/**
 * The subtree a project-history read shows: the grant's scope, or a folder inside it (an MCP
 * endpoint's). Changes outside it are left out.
 */
export function historyScope(g: ContentGrant, within: string | undefined): string {
  if (within === undefined) return g.scope;
  if (!pathInScope(g.scope, within)) throw outsideScope(g.scope);
  return within;
}
