import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import { DomainError } from '../errors/domainError.ts';
import type { ContentAccess, ContentGrant } from './contentAccess.ts';

/** Who a background run writes as: the principal it started with, looked up again at each write. */
export type RunPrincipal = Pick<Principal, 'kind' | 'id'> & { agentAccess?: { id: string } };

/**
 * Background writers (platform sync runs, sandbox write-backs, ingestion tasks) write long after
 * the request that started them. Each of their writes asks the policy again, in the project's
 * serialized section right before its commit (ContentStore's `check`: after every earlier write
 * of the project, before this one), with the principal as it stands now: a
 * key revoked or deleted, a user removed, a role lowered or a scope narrowed meanwhile stops the
 * write, and the run ends with the refusal's code.
 */
export class WriteTimeGrants {
  constructor(
    private readonly d: {
      authenticator: Pick<Authenticator, 'current'>;
      access: Pick<ContentAccess, 'grantPaths'>;
    },
  ) {}

  /**
   * The grant to write `paths` of the project now. `narrow` re-applies what the run acted through
   * (an agent's access: its subtree and mode as they stand now; null when that access is gone).
   * Throws a domain error: UNAUTHORIZED when the principal is gone, else the policy's 404/403.
   */
  async require(who: RunPrincipal, projectId: string, paths: readonly string[], narrow?: (current: Principal) => Principal | null): Promise<ContentGrant> {
    const now = await this.d.authenticator.current(who);
    if (!now) throw new DomainError('UNAUTHORIZED', `The ${who.kind === 'user' ? 'user' : 'key'} this run writes as no longer exists or was revoked; nothing more is written.`);
    const principal = narrow ? narrow(now) : now;
    if (!principal) throw new DomainError('FORBIDDEN', 'What this run acted through (an access, a bash tool or a tool binding) was taken away; nothing more is written.');
    return this.d.access.grantPaths(principal, projectId, 'content:write', paths);
  }
}
