import type { Principal } from '../auth/principal.ts';
import { asAppError } from '../http/errors.ts';
import type { Authorizer } from '../policies/authorize.ts';
import { normalizeScope } from '../policies/scope.ts';

export type GitAction = 'content:read' | 'content:write';

export interface Refusal {
  status: number;
  message: string;
}

/**
 * Whether `principal` may fetch (content:read) or push (content:write) the whole repository.
 * A repository holds every path, so a key limited to a subtree can do neither.
 */
export function gitRefusal(authorizer: Authorizer, principal: Principal, projectId: string, action: GitAction): Refusal | null {
  try {
    authorizer.requireProject(principal, projectId, action);
  } catch (e) {
    const known = asAppError(e);
    if (!known) throw e;
    return { status: known.status, message: known.message };
  }
  if (principal.kind === 'key') {
    const scope = normalizeScope(principal.connection.scope_path);
    if (scope !== '') {
      return {
        status: 403,
        message: `This access key is limited to "${scope}"; cloning or pushing needs a key whose scope is the whole project.`,
      };
    }
  }
  return null;
}
