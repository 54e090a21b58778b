import type { Principal } from '../../auth/principal.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { DomainError } from '../../errors/domainError.ts';
import { pathInScope } from '../../policies/scope.ts';

/** One access of an agent as a turn sees it: its node where it is now ('' = the whole project). */
export interface AccessReach {
  id: string;
  nodeId: string | null;
  path: string;
  mode: 'read' | 'read_write';
  tools: readonly string[];
}

/**
 * The principal an agent acts as through one access (or bash tool): its own key narrowed to that
 * subtree and mode. The policy (Authorizer, ContentAccess) then decides every read and write as it
 * does for any scoped key; `agentAccess` is what lets an agent's key reach content at all.
 */
export function actingThrough(agent: ConnectionRecord, reach: { id: string; path: string; mode: 'read' | 'read_write' }): Principal {
  return { kind: 'key', id: agent.id, connection: { ...agent, scope_path: reach.path, mode: reach.mode }, agentAccess: { id: reach.id } };
}

const label = (a: AccessReach) => `"${a.path === '' ? '/' : a.path}" (${a.mode === 'read' ? 'read-only' : 'read and write'})`;

/**
 * The access a tool call on `path` goes through: the deepest one covering the path that offers the
 * tool (and may write, for writes). The refusal tells the model what it may reach instead.
 */
export function accessFor(accesses: readonly AccessReach[], path: string, tool: string, write: boolean): AccessReach {
  const covering = accesses.filter((a) => pathInScope(a.path, path));
  const usable = covering.filter((a) => a.tools.includes(tool) && (!write || a.mode === 'read_write'));
  if (usable.length > 0) return usable.reduce((a, b) => (b.path.length > a.path.length ? b : a));
  const reachable = accesses.filter((a) => a.tools.includes(tool) && (!write || a.mode === 'read_write')).map(label);
  const where = reachable.length ? `It may ${tool} beneath: ${reachable.join(', ')}.` : `No access of this agent offers ${tool}.`;
  if (covering.length > 0) {
    const why = write && covering.every((a) => a.mode === 'read') ? 'is read-only for this agent' : `is not open to ${tool} for this agent`;
    throw new DomainError('FORBIDDEN', `"${path}" ${why}. ${where}`, { path });
  }
  throw new DomainError('FORBIDDEN', `"${path}" is outside this agent's accesses. ${where}`, { path });
}

/** A path relative to an access's node, as the tools library takes it. */
export const relativeTo = (root: string, path: string) => (root === '' ? path : path === root ? '' : path.slice(root.length + 1));

/** Tool types whose calls change content (a shell tool only when its config makes it writable). */
export function toolWrites(type: string, config: Record<string, unknown>): boolean {
  return type === 'write' || (type === 'shell' && config.writable === true);
}

/**
 * The reach a tool bound to an agent gives it: the tool's node (where it is now; '' for a tool on
 * the whole project), writable when the tool writes. Binding a tool is the grant: an admin chose it.
 */
export function boundToolReach(binding: { id: string }, tool: { type: string; config: Record<string, unknown> }, nodePath: string): { id: string; path: string; mode: 'read' | 'read_write' } {
  return { id: binding.id, path: nodePath, mode: toolWrites(tool.type, tool.config) ? 'read_write' : 'read' };
}
