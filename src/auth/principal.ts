import type { ConnectionRecord } from '../domain/connections/connectionRecord.ts';
import type { UserRecord } from '../domain/users/userStore.ts';

/** Who is calling: a signed-in user (JWT) or a machine holding a connection's access key. */
export type Principal =
  | { kind: 'user'; id: string; user: UserRecord }
  | {
      kind: 'key';
      id: string;
      connection: ConnectionRecord;
      /**
       * Set when an agent acts through one of its accesses: the connection then carries that
       * access's subtree and mode. An agent's key without it reaches no content (see Authorizer).
       */
      agentAccess?: { id: string };
    };

/** The actor recorded on content versions for a principal (issue 3: user, agent or sync). */
export function actorOf(principal: Principal): { type: 'user' | 'agent' | 'sync'; id: string; author: string } {
  if (principal.kind === 'user') return { type: 'user', id: principal.id, author: principal.user.email };
  const c = principal.connection;
  const type = c.kind === 'sync' ? 'sync' : c.kind === 'api' ? 'agent' : 'agent';
  return { type, id: c.id, author: `agent:${c.name}` };
}
