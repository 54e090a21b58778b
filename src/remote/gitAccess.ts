import type { Principal } from '../auth/principal.ts';
import { asAppError } from '../http/errors.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';

export type GitAction = 'content:read' | 'content:write';

export interface Refusal {
  status: number;
  message: string;
}

/**
 * Whether `principal` may fetch (content:read) or push (content:write) the whole repository,
 * asked of the content-access policy. A repository holds every path, so a key limited to a
 * subtree can do neither.
 */
export async function gitRefusal(access: Pick<ContentAccess, 'grant' | 'requireWholeProject'>, principal: Principal, projectId: string, action: GitAction): Promise<Refusal | null> {
  try {
    const grant = await access.grant(principal, projectId, action);
    access.requireWholeProject(grant, 'Cloning or pushing');
    return null;
  } catch (e) {
    const known = asAppError(e);
    if (!known) throw e;
    return { status: known.status, message: known.message };
  }
}
