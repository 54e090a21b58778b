import type { ExecutionContext } from 'ava';
import { actorOf, type Principal } from '../../src/auth/principal.ts';
import type { WritableNodeType } from '../../src/content/contentStore.ts';
import type { ConnectionRecord } from '../../src/domain/connections/connectionRecord.ts';
import { ContentAccess, type ContentAction, type ContentGrant } from '../../src/policies/contentAccess.ts';
import { fixture, type Fixture } from '../content/helpers.ts';

export const P = 'proj';

/**
 * A real content store with the real content-access policy over a gate that grants every
 * action on P: the commands' rules run as every surface runs them, with no server.
 */
export interface CommandFixture extends Fixture {
  access: ContentAccess;
  /** A user's grant over the whole project. */
  user: ContentGrant;
  /** An access key's grant held to `scope`. */
  key(scope: string, action?: ContentAction): ContentGrant;
  /** Writes a node as the user (markdown unless said). */
  write(path: string, content: unknown, type?: WritableNodeType): ReturnType<Fixture['store']['write']>;
}

/** The fixture of one test, removed when the test ends. */
export function commandFixture(t: ExecutionContext): CommandFixture {
  const f = fixture();
  t.teardown(f.cleanup);
  const scopes = new Map<string, string>();
  const gate = (principal: Principal) => ({ role: principal.kind === 'user' ? ('admin' as const) : null, scope: principal.kind === 'key' ? scopes.get(principal.id)! : '' });
  const access = new ContentAccess({ requireProject: gate });
  // What access.grant answers over this gate, at once (the grant is async; the fixture stays synchronous).
  const grantNow = (principal: Principal, action: ContentAction): ContentGrant => ({ principal, projectId: P, ...gate(principal), action, actor: actorOf(principal) });
  const user: Principal = { kind: 'user', id: 'u_alice', user: { email: 'alice@example.com' } } as Principal;
  let keys = 0;
  const grant = grantNow(user, 'content:write');
  return Object.assign(f, {
    access,
    user: grant,
    write: (path: string, content: unknown, type: WritableNodeType = 'markdown') => f.store.write(P, grant.actor, { path, type, content }),
    key(scope: string, action: ContentAction = 'content:write') {
      const id = `c_key${++keys}`;
      scopes.set(id, scope);
      const connection = { id, kind: 'api', name: `key ${keys}`, project_id: P, scope_path: scope } as ConnectionRecord;
      return grantNow({ kind: 'key', id, connection }, action);
    },
  });
}
